import type { Check } from "./checks";
import type { EvidenceTurnResult } from "./evidence-run";
import { common, ratio, type CommonMetrics, type Ratio } from "./metrics";

/** Outcome class and reason codes against the labels (seed 002 §14.3, §10). */

export function evidenceChecks(t: EvidenceTurnResult): Check[] {
  const e = t.expect;
  const o = t.observed;
  const out: Check[] = [
    {
      name: "outcome",
      ok: o.outcome === e.outcome,
      detail: `${o.outcome}${o.error ? ` (error ${o.error})` : ""}, expected ${e.outcome}`,
    },
  ];
  if (e.reasonCodes)
    out.push({
      name: "reasonCodes",
      ok: e.reasonCodes.every((r) => o.reasonCodes.includes(r)),
      detail: `got [${o.reasonCodes}], must include [${e.reasonCodes}]`,
    });
  if (e.reasonCodesExclude)
    out.push({
      name: "reasonCodesExclude",
      ok: !e.reasonCodesExclude.some((r) => o.reasonCodes.includes(r)),
      detail: `got [${o.reasonCodes}], must exclude [${e.reasonCodesExclude}]`,
    });
  for (const x of e.answerIncludes ?? [])
    out.push({ name: "answer", ok: o.answer.includes(x), detail: `answer lacks "${x}"` });
  for (const x of e.answerExcludes ?? [])
    out.push({ name: "answer", ok: !o.answer.includes(x), detail: `answer shows "${x}"` });
  return out;
}

export interface EvidenceMetrics extends CommonMetrics {
  outcome: Ratio;
  reasonCodes: Ratio;
  /** Confusion of labelled vs observed outcome classes. */
  confusion: Record<string, Record<string, number>>;
  /** Interpreter, planner and critic share role PLANNER; the answer is role ANSWER. */
  stages: Record<"planner" | "answer", { turns: number; accuracy: Ratio; measure: string }>;
}

function stage(turns: EvidenceTurnResult[], role: string, names: string[], measure: string) {
  const ts = turns.filter(
    (t) => t.calls.some((c) => c.role === role && !c.injected) && evidenceChecks(t).some((c) => names.includes(c.name)),
  );
  return {
    turns: ts.length,
    accuracy: ratio(
      ts.filter((t) =>
        evidenceChecks(t)
          .filter((c) => names.includes(c.name))
          .every((c) => c.ok),
      ).length,
      ts.length,
    ),
    measure,
  };
}

export function evidenceMetrics(turns: EvidenceTurnResult[]): EvidenceMetrics {
  const confusion: Record<string, Record<string, number>> = {};
  for (const t of turns) {
    const row = (confusion[t.expect.outcome] ??= {});
    const got = t.observed.outcome ?? "none";
    row[got] = (row[got] ?? 0) + 1;
  }
  const rc = turns.flatMap((t) => evidenceChecks(t).filter((c) => c.name === "reasonCodes"));
  return {
    ...common(turns, evidenceChecks),
    outcome: ratio(turns.filter((t) => t.observed.outcome === t.expect.outcome).length, turns.length),
    reasonCodes: ratio(rc.filter((c) => c.ok).length, rc.length),
    confusion,
    stages: {
      planner: stage(
        turns,
        "planner",
        ["outcome", "reasonCodes", "reasonCodesExclude"],
        "outcome class + reason codes",
      ),
      answer: stage(turns, "answer", ["answer"], "answer mentions the evidence"),
    },
  };
}
