import type { EvidenceCase } from "./dataset";
import { first, type Client } from "./http";
import { createConversation, turnResult, type TurnResultOf } from "./case-run";
import type { ModelServer } from "./model-server";
import type { ScriptFor } from "./workbench-run";

/** Runs evidence-workflow questions (seed 002) over HTTP and records each turn's outcome class and reason codes. */

export type EvidenceTurnResult = TurnResultOf<
  "evidence",
  EvidenceCase["turns"][number]["expect"],
  { outcome: string | null; reasonCodes: string[]; answer: string; error: string | null }
>;

export async function runEvidenceCase(
  client: Client,
  models: ModelServer,
  c: EvidenceCase,
  scriptFor: ScriptFor,
): Promise<EvidenceTurnResult[]> {
  const id = await createConversation(client, "/v1/evidence/conversations", c.id);
  const out: EvidenceTurnResult[] = [];
  for (const [i, t] of c.turns.entries()) {
    models.beginTurn(scriptFor(c.id, i, t.models));
    const r = await client.sse(`/v1/evidence/conversations/${id}/messages`, { text: t.text, debug: true });
    const calls = models.endTurn();
    const fin = first(r, "final") as { outcome?: string; reasonCodes?: string[]; answer?: string } | undefined;
    const err = first(r, "error") as { code?: string } | undefined;
    const observed = {
      outcome: fin?.outcome ?? null,
      reasonCodes: fin?.reasonCodes ?? [],
      answer: fin?.answer ?? "",
      error: err?.code ?? r.json?.error?.code ?? null,
    };
    out.push(turnResult("evidence", c, i, t, observed, calls, r.ms));
  }
  return out;
}
