import type { ConfigReport } from "./evaluate";
import type { Ratio } from "./metrics";

/**
 * The report's headline numbers as a flat list: one place that names them, their direction and
 * how to print them — the terminal table, the HTML page, --compare and the baseline all use it.
 */

export type Kind = "ratio" | "number" | "ms";

export interface Headline {
  key: string;
  label: string;
  value: number | null;
  n?: number;
  kind: Kind;
  /** Which way is better; "none" is reported but never gated. */
  better: "higher" | "lower" | "none";
}

const r = (key: string, label: string, x: Ratio | undefined, better: Headline["better"] = "higher"): Headline => ({
  key,
  label,
  value: x?.value ?? null,
  n: x?.n ?? 0,
  kind: "ratio",
  better,
});
const num = (
  key: string,
  label: string,
  value: number | null,
  better: Headline["better"],
  kind: Kind = "number",
): Headline => ({ key, label, value, kind, better });

/** A suite's cost rows: prompt tokens per `per` (its turn), then latency at these percentiles. */
const costs = (
  suite: string,
  label: string,
  per: string,
  m: { tokens: { estimated: boolean; promptPerTurn: number }; latency: { p50: number; p95: number } },
  percentiles: ("p50" | "p95")[] = ["p50", "p95"],
): Headline[] => [
  num(
    `${suite}.promptTokens`,
    `${label}: prompt tokens per ${per}${m.tokens.estimated ? " (≈chars/4)" : ""}`,
    m.tokens.promptPerTurn,
    "none",
  ),
  ...percentiles.map((p) =>
    num(`${suite}.latency${p.toUpperCase()}`, `${label}: latency ${p}`, m.latency[p], "none", "ms"),
  ),
];

export function headlines(rep: ConfigReport): Headline[] {
  const out: Headline[] = [];
  const w = rep.workbench;
  if (w) {
    const prep =
      (w.callsPerRequest.planner ?? 0) + (w.callsPerRequest.reranker ?? 0) + (w.callsPerRequest.classifier ?? 0);
    out.push(
      r("workbench.turnPass", "Workbench: requests fully as labelled", w.turnPass),
      r("workbench.casePass", "Workbench: cases fully as labelled", w.casePass),
      r("workbench.plan", "Workbench: plan accuracy", w.plan),
      r("workbench.routing", "Workbench: routing (source mode) accuracy", w.routing),
      r("workbench.resolution", "Workbench: resolution accuracy", w.resolution),
      {
        key: "workbench.clarification.precision",
        label: "Workbench: clarification precision",
        value: w.clarification.precision,
        n: w.clarification.tp + w.clarification.fp,
        kind: "ratio",
        better: "higher",
      },
      {
        key: "workbench.clarification.recall",
        label: "Workbench: clarification recall",
        value: w.clarification.recall,
        n: w.clarification.tp + w.clarification.fn,
        kind: "ratio",
        better: "higher",
      },
      r("workbench.clarification.candidates", "Workbench: clarification candidate lists", w.clarification.candidates),
      r("workbench.replyKind", "Workbench: clarification-answer classification", w.replyKind),
      r("workbench.citations", "Workbench: answer citations", w.citations),
      r("workbench.validation", "Workbench: response validation verdict", w.validation),
      r("workbench.callsExact", "Workbench: model calls as labelled", w.callsExact),
      r(
        "workbench.seedTable",
        "Workbench: requests within the seed's call table",
        mergeRatios(w.seedTable.map((x) => x.within)),
      ),
      r(
        "workbench.overBudget",
        "Workbench: requests over the seed's budget (>2 prep or >1 final)",
        w.overBudget,
        "lower",
      ),
      num(
        "workbench.diverged",
        "Workbench: reply turns with no question to answer (run left the labels)",
        w.diverged,
        "none",
      ),
      num("workbench.prepCalls", "Workbench: preparatory calls per request", prep, "lower"),
      num("workbench.finalCalls", "Workbench: final calls per request", w.callsPerRequest.answer ?? 0, "none"),
      ...costs("workbench", "Workbench", "request", w),
    );
  }
  const c = rep.clinic;
  if (c) {
    out.push(
      r("clinic.turnPass", "Clinic: turns fully as labelled", c.turnPass),
      r("clinic.casePass", "Clinic: dialogues fully as labelled", c.casePass),
      r("clinic.router", "Clinic: router decision", c.router),
      r("clinic.branch", "Clinic: active branch", c.branch),
      r("clinic.step", "Clinic: booking step", c.step),
      r("clinic.slots", "Clinic: slots", c.slots),
      r("clinic.events", "Clinic: turn events (exact set)", c.events),
      r("clinic.escalation", "Clinic: escalation reason", c.escalation),
      r("clinic.callsExact", "Clinic: model calls as labelled", c.callsExact),
      num("clinic.branchCalls", "Clinic: branch calls per turn", c.callsPerTurn.branch ?? 0, "none"),
      ...costs("clinic", "Clinic", "turn", c),
    );
  }
  const e = rep.evidence;
  if (e) {
    out.push(
      r("evidence.turnPass", "Evidence: questions fully as labelled", e.turnPass),
      r("evidence.outcome", "Evidence: outcome class", e.outcome),
      r("evidence.reasonCodes", "Evidence: reason codes", e.reasonCodes),
      ...costs("evidence", "Evidence", "question", e, ["p50"]),
    );
  }
  for (const m of rep.coverage)
    out.push({
      key: `coverage.${m.machine}`,
      label: `Coverage: ${m.machine} transitions`,
      value: m.defined ? m.covered / m.defined : null,
      n: m.defined,
      kind: "ratio",
      better: "higher",
    });
  return out;
}

function mergeRatios(xs: Ratio[]): Ratio {
  const ok = xs.reduce((s, x) => s + x.ok, 0);
  const n = xs.reduce((s, x) => s + x.n, 0);
  return { ok, n, value: n ? ok / n : null };
}

export function fmt(h: Pick<Headline, "value" | "kind">): string {
  if (h.value === null) return "—";
  if (h.kind === "ratio") return `${(h.value * 100).toFixed(1)}%`;
  if (h.kind === "ms") return `${h.value.toFixed(0)} ms`;
  return h.value.toFixed(2);
}
