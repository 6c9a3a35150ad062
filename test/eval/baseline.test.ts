import { describe, expect, it } from "vitest";
import { baselineOf, regressions, type Baseline } from "../../eval/lib/baseline";
import type { ConfigReport } from "../../eval/lib/evaluate";
import { clinicMetrics } from "../../eval/lib/metrics";

/** The CI gate: a gated metric below its recorded value, or a case that passed and fails now, is a regression. */

function report(covered: number, failing: string[] = []): ConfigReport {
  const clinic = {
    ...clinicMetrics([]),
    passingCases: ["cl-a", "cl-b"].filter((c) => !failing.includes(c)),
    failures: failing.map((caseId) => ({ caseId, turn: 0, text: "", failed: [] })),
  };
  return {
    config: { name: "default", switches: {} },
    mode: "scripted",
    startedAt: "",
    durationMs: 0,
    workbench: null,
    evidence: null,
    skipped: {},
    outcomes: null,
    recording: { version: 1, recordedAt: "", endpoint: "", models: {}, turns: {} },
    turns: [],
    clinic,
    coverage: [{ machine: "m", defined: 10, covered, missing: [] }],
  } as unknown as ConfigReport;
}

describe("baseline regressions", () => {
  it("passes at or above the baseline and fails below it", () => {
    const base = baselineOf(report(7));
    expect(base.metrics["coverage.m"]).toEqual({ value: 0.7, better: "higher", kind: "ratio" });
    expect(regressions(base, report(7))).toEqual([]);
    expect(regressions(base, report(9))).toEqual([]);
    expect(regressions(base, report(6))).toEqual(["Coverage: m transitions: 60.0% (baseline 70.0%)"]);
  });

  it("names a case that passed in the baseline and fails now, and judges only suites that ran", () => {
    const base: Baseline = {
      ...baselineOf(report(7)),
      passingCases: { clinic: ["cl-a", "cl-b"], workbench: ["wb-x"] },
    };
    expect(regressions(base, report(7, ["cl-b"]))).toEqual(["clinic case cl-b passed in the baseline and fails now"]);
  });

  it("does not flag a value equal to the baseline after rounding", () => {
    const base = baselineOf(report(7));
    base.metrics["coverage.m"]!.value = 0.7000004;
    expect(regressions(base, report(7))).toEqual([]);
  });
});
