import type { EvidenceCase } from "./dataset";
import { first, type Client } from "./http";
import type { CallRecord, ModelServer } from "./model-server";
import type { ScriptFor } from "./workbench-run";

/** Runs evidence-workflow questions (seed 002) over HTTP and records each turn's outcome class and reason codes. */

export interface EvidenceTurnResult {
  suite: "evidence";
  caseId: string;
  turn: number;
  tags: string[];
  text: string;
  expect: EvidenceCase["turns"][number]["expect"];
  observed: { outcome: string | null; reasonCodes: string[]; answer: string; error: string | null };
  calls: CallRecord[];
  ms: number;
  diverged: false;
}

export async function runEvidenceCase(
  client: Client,
  models: ModelServer,
  c: EvidenceCase,
  scriptFor: ScriptFor,
): Promise<EvidenceTurnResult[]> {
  const created = await client.json<{ conversationId?: string }>("POST", "/v1/evidence/conversations", {});
  const id = created.body.conversationId;
  if (!id) throw new Error(`case ${c.id}: could not create an evidence conversation (HTTP ${created.status})`);
  const out: EvidenceTurnResult[] = [];
  for (const [i, t] of c.turns.entries()) {
    models.beginTurn(scriptFor(c.id, i, t.models));
    const r = await client.sse(`/v1/evidence/conversations/${id}/messages`, { text: t.text, debug: true });
    const calls = models.endTurn();
    const fin = first(r, "final") as { outcome?: string; reasonCodes?: string[]; answer?: string } | undefined;
    const err = first(r, "error") as { code?: string } | undefined;
    out.push({
      suite: "evidence",
      caseId: c.id,
      turn: i,
      tags: c.tags,
      text: t.text,
      expect: t.expect,
      observed: {
        outcome: fin?.outcome ?? null,
        reasonCodes: fin?.reasonCodes ?? [],
        answer: fin?.answer ?? "",
        error: err?.code ?? r.json?.error?.code ?? null,
      },
      calls,
      ms: r.ms,
      diverged: false,
    });
  }
  return out;
}
