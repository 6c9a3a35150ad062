import type { ClinicCase, ClinicExpect, Datasets } from "./dataset";
import { first, type Client } from "./http";
import { playTurns, turnResult, type CaseRun, type TurnResultOf } from "./case-run";

/** Runs clinic dialogues over HTTP (CONTRACT §5) and records each turn's state and events. */

export interface ClinicState {
  activeBranch: string | null;
  routerDecision: string | null;
  step: string | null;
  slots: Record<string, unknown>;
  handoffCount: number;
  softInsertionCount: number;
  suspended: { intent: string; step: string | null } | null;
  escalationReason: string | null;
}

export interface ClinicObserved {
  state: ClinicState | null;
  events: string[];
  reply: string;
  /** Only measured when the turn labels it (two extra GETs). */
  stateUnchanged: boolean | null;
  messagesDelta: number | null;
  error: string | null;
}

export type ClinicTurnResult = TurnResultOf<"clinic", ClinicExpect, ClinicObserved>;

/** The eval's own knowledge base of the clinic (prices, hours, address), so informational branches have facts in live runs. */
export async function loadClinicKb(client: Client, kb: Datasets["clinicKb"]): Promise<void> {
  for (const d of kb) {
    const r = await client.json("POST", "/v1/clinic/kb/documents", d);
    if (r.status >= 300)
      throw new Error(`clinic knowledge base: HTTP ${r.status} for ${d.id}: ${JSON.stringify(r.body).slice(0, 200)}`);
  }
}

export function runClinicCase({ client, models, scriptFor }: CaseRun, c: ClinicCase): Promise<ClinicTurnResult[]> {
  return playTurns(client, "/v1/clinic/threads", c, async (threadId, t, i) => {
    const thread = async () =>
      (await client.json<{ state?: ClinicState; messages?: unknown[] }>("GET", `/v1/clinic/threads/${threadId}`)).body;
    for (const op of t.operator ?? []) {
      const path = `/v1/inbox/conversations/${threadId}/${op.action === "message" ? "messages" : op.action}`;
      const body = {
        ...(op.operator ? { operator: op.operator } : {}),
        ...(op.text ? { text: op.text } : {}),
        ...(op.assignee ? { assignee: op.assignee } : {}),
        ...(op.to ? { to: op.to } : {}),
      };
      const r = await client.json("POST", path, body);
      const want = op.status ?? (op.action === "message" ? 201 : 200);
      if (r.status !== want)
        throw new Error(`case ${c.id} turn ${i}: operator ${op.action} answered HTTP ${r.status}, expected ${want}`);
    }
    const before = t.expect.stateUnchanged !== undefined ? await thread() : null;
    models.beginTurn(scriptFor(c.id, i, t.models));
    const r = await client.sse(`/v1/clinic/threads/${threadId}/messages`, { text: t.text, debug: true });
    const calls = models.endTurn();
    const after = before ? await thread() : null;
    const fin = first(r, "final") as { reply?: string; state?: ClinicState; events?: string[] } | undefined;
    const err = first(r, "error") as { code?: string } | undefined;
    const observed: ClinicObserved = {
      state: fin?.state ?? null,
      events: fin?.events ?? [],
      reply: fin?.reply ?? "",
      stateUnchanged: before && after ? JSON.stringify(before.state) === JSON.stringify(after.state) : null,
      messagesDelta: before && after ? (after.messages?.length ?? 0) - (before.messages?.length ?? 0) : null,
      error: err?.code ?? r.json?.error?.code ?? null,
    };
    return turnResult("clinic", c, i, t, observed, calls, r.ms);
  });
}
