import type { EvidenceCase } from "./dataset";
import { first, type Client } from "./http";
import type { ModelServer } from "./model-server";
import { errorCodeOf, labelledTurn, scriptedTurn, type TurnResult } from "./turn-result";
import type { ScriptFor } from "./workbench-run";

/** Runs evidence-workflow questions (seed 002) over HTTP and records each turn's outcome class and reason codes. */

export type EvidenceTurnResult = TurnResult<
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
  const created = await client.json<{ conversationId?: string }>("POST", "/v1/evidence/conversations", {});
  const id = created.body.conversationId;
  if (!id) throw new Error(`case ${c.id}: could not create an evidence conversation (HTTP ${created.status})`);
  const out: EvidenceTurnResult[] = [];
  for (const [i, t] of c.turns.entries()) {
    const { r, calls } = await scriptedTurn(
      client,
      models,
      [scriptFor(c.id, i, t.models)],
      `/v1/evidence/conversations/${id}/messages`,
      { text: t.text, debug: true },
    );
    const fin = first(r, "final") as { outcome?: string; reasonCodes?: string[]; answer?: string } | undefined;
    out.push({
      ...labelledTurn("evidence", c, i),
      observed: {
        outcome: fin?.outcome ?? null,
        reasonCodes: fin?.reasonCodes ?? [],
        answer: fin?.answer ?? "",
        error: errorCodeOf(r),
      },
      calls,
      ms: r.ms,
      diverged: false,
    });
  }
  return out;
}
