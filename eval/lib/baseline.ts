import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { ConfigReport } from "./evaluate";
import { fmt, headlines, type Kind } from "./headline";

/**
 * The recorded baseline of the scripted run (eval/baseline.json). A scripted run is
 * deterministic, so any drop is a real change: a gated metric below its recorded value, or a
 * case that passed and no longer does, is a regression and fails the run.
 */

export interface Baseline {
  version: 1;
  recordedAt: string;
  config: string;
  metrics: Record<string, { value: number; better: "higher" | "lower"; kind: Kind }>;
  passingCases: Record<string, string[]>;
}

// Values are stored rounded to 6 decimals.
const EPS = 1e-6;

export function baselineOf(rep: ConfigReport): Baseline {
  const metrics: Baseline["metrics"] = {};
  for (const h of headlines(rep))
    if (h.better !== "none" && h.value !== null)
      metrics[h.key] = { value: Number(h.value.toFixed(6)), better: h.better, kind: h.kind };
  return {
    version: 1,
    recordedAt: new Date().toISOString(),
    config: rep.config.name,
    metrics,
    passingCases: {
      ...(rep.workbench ? { workbench: rep.workbench.passingCases } : {}),
      ...(rep.clinic ? { clinic: rep.clinic.passingCases } : {}),
      ...(rep.evidence ? { evidence: rep.evidence.passingCases } : {}),
    },
  };
}

export function readBaseline(file: string): Baseline | null {
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Baseline) : null;
}

export function writeBaseline(file: string, rep: ConfigReport): void {
  writeFileSync(file, `${JSON.stringify(baselineOf(rep), null, 1)}\n`);
}

/** Regressions of `rep` against `base`, as lines for the terminal. Suites that did not run are not judged. */
export function regressions(base: Baseline, rep: ConfigReport): string[] {
  const out: string[] = [];
  const now = new Map(headlines(rep).map((h) => [h.key, h]));
  for (const [key, b] of Object.entries(base.metrics)) {
    const h = now.get(key);
    if (!h) continue;
    const v = h.value ?? (b.better === "higher" ? 0 : Infinity);
    const worse = b.better === "higher" ? v < b.value - EPS : v > b.value + EPS;
    if (worse)
      out.push(
        `${h.label}: ${fmt({ value: h.value, kind: b.kind })} (baseline ${fmt({ value: b.value, kind: b.kind })})`,
      );
  }
  const suites: Array<[string, { passingCases: string[]; failures: Array<{ caseId: string }> } | null]> = [
    ["workbench", rep.workbench],
    ["clinic", rep.clinic],
    ["evidence", rep.evidence],
  ];
  for (const [suite, m] of suites) {
    if (!m) continue;
    const failing = new Set(m.failures.map((f) => f.caseId));
    for (const id of base.passingCases[suite] ?? [])
      if (failing.has(id)) out.push(`${suite} case ${id} passed in the baseline and fails now`);
  }
  return out;
}
