import type { EvidenceCase } from "./dataset";
import { first } from "./http";
import { playTurns, turnResult, type CaseRun, type TurnResultOf } from "./case-run";

/** Runs evidence-workflow questions (seed 002) over HTTP and records each turn's outcome class and reason codes. */

export type EvidenceTurnResult = TurnResultOf<
  "evidence",
  EvidenceCase["turns"][number]["expect"],
  { outcome: string | null; reasonCodes: string[]; answer: string; error: string | null }
>;

export function runEvidenceCase(
  { client, models, scriptFor }: CaseRun,
  c: EvidenceCase,
): Promise<EvidenceTurnResult[]> {
  return playTurns(client, "/v1/evidence/conversations", c, async (id, t, i) => {
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
    return turnResult("evidence", c, i, t, observed, calls, r.ms);
  });
}
