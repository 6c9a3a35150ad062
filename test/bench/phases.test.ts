import { describe, expect, it } from "vitest";
import {
  formatBound,
  metricTotal,
  phasesFromMetrics,
  phaseQuantile,
  phaseSummary,
  type PhaseReading,
} from "../../bench/phases";

const reading = (phase: string, buckets: [number, number][]): PhaseReading => new Map([[phase, new Map(buckets)]]);

describe("bench phases: the window's share of a cumulative histogram", () => {
  it("takes percentiles of the difference between two readings, as bucket bounds", () => {
    // Before: 10 fast observations. The window adds 98 under 50 ms and 2 between 1 s and 2.5 s.
    const before = reading("admit", [
      [0.05, 10],
      [1, 10],
      [2.5, 10],
      [Number.POSITIVE_INFINITY, 10],
    ]);
    const after = reading("admit", [
      [0.05, 108],
      [1, 108],
      [2.5, 110],
      [Number.POSITIVE_INFINITY, 110],
    ]);
    expect(phaseQuantile(before, after, "admit", 0.5)).toBe(0.05);
    expect(phaseQuantile(before, after, "admit", 0.99)).toBe(2.5);
    expect(phaseQuantile(before, after, "commit", 0.5)).toBeNaN();
    expect(phaseQuantile(after, after, "admit", 0.5)).toBeNaN();
    // Every phase, one line: a phase the window did not see prints as "—".
    expect(phaseSummary(before, after)).toBe("admit ≤50ms/≤2.5s, first_token —/—, commit —/—");
  });

  it("prints bounds a reader can compare", () => {
    expect(formatBound(0.025)).toBe("≤25ms");
    expect(formatBound(2.5)).toBe("≤2.5s");
    expect(formatBound(Number.POSITIVE_INFINITY)).toBe("> 30 s");
    expect(formatBound(Number.NaN)).toBe("—");
  });

  it("reads a server's /metrics text: its system's buckets only", () => {
    const text = [
      "# TYPE ds_turn_phase_seconds histogram",
      'ds_turn_phase_seconds_bucket{le="0.05",system="clinic",phase="admit"} 3',
      'ds_turn_phase_seconds_bucket{le="+Inf",system="clinic",phase="admit"} 4',
      'ds_turn_phase_seconds_bucket{le="0.05",system="workbench",phase="admit"} 9',
      'ds_turn_phase_seconds_sum{system="clinic",phase="admit"} 0.4',
    ].join("\n");
    const r = phasesFromMetrics(text);
    expect([...r.keys()]).toEqual(["admit"]);
    expect([...r.get("admit")!]).toEqual([
      [0.05, 3],
      [Number.POSITIVE_INFINITY, 4],
    ]);
    expect(phaseQuantile(new Map(), r, "admit", 0.5)).toBe(0.05);
    expect(phaseQuantile(new Map(), r, "admit", 0.99)).toBe(Number.POSITIVE_INFINITY);
  });

  it("sums a metric's samples over its label sets, and only that metric's", () => {
    const text = [
      "# HELP ds_sse_writes_total x",
      "ds_sse_writes_total 41",
      "ds_sse_write_wait_seconds_count 3",
      'ds_sse_write_wait_seconds_bucket{le="0.001"} 1',
      'ds_errors_total{where="turn",code="internal"} 2',
      'ds_errors_total{where="http",code="conflict"} 5',
    ].join("\n");
    expect(metricTotal(text, "ds_sse_writes_total")).toBe(41);
    expect(metricTotal(text, "ds_sse_write_wait_seconds_count")).toBe(3);
    expect(metricTotal(text, "ds_errors_total")).toBe(7);
    expect(metricTotal(text, "ds_sse_write_wait_seconds")).toBe(0);
  });
});
