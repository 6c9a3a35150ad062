import { clinicChecks, countCalls, planMatches, resolutionMatches, workbenchChecks, type Check } from "./checks";
import type { ClinicTurnResult } from "./clinic-run";
import type { CallRecord } from "./model-server";
import { SEED_TABLE, seedRowOf, withinRow, type SeedRow } from "./seed-table";
import type { WorkbenchTurnResult } from "./workbench-run";

/** Aggregates per-turn results into the report's metrics (all plain JSON). */

export interface Ratio {
  n: number;
  ok: number;
  /** ok / n, or null when nothing was measured. */
  value: number | null;
}

export const ratio = (ok: number, n: number): Ratio => ({ n, ok, value: n ? ok / n : null });
const count = <T>(xs: T[], pred: (x: T) => boolean): Ratio => ratio(xs.filter(pred).length, xs.length);

export interface Failure {
  caseId: string;
  turn: number;
  text: string;
  failed: Check[];
}

export interface RoleUse {
  calls: number;
  meanPromptTokens: number;
  meanLatencyMs: number;
  failedCalls: number;
}

export interface CommonMetrics {
  turns: number;
  cases: number;
  turnPass: Ratio;
  casePass: Ratio;
  passingCases: string[];
  failures: Failure[];
  byTag: Record<string, Ratio>;
  roles: Record<string, RoleUse>;
  tokens: { prompt: number; completion: number; promptPerTurn: number; estimated: boolean };
  latency: { p50: number; p95: number; mean: number };
}

function percentile(xs: number[], p: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export function common<
  T extends { caseId: string; turn: number; text: string; tags: string[]; calls: CallRecord[]; ms: number },
>(turns: T[], checks: (t: T) => Check[]): CommonMetrics {
  const byCase = new Map<string, boolean>();
  const byTag: Record<string, { ok: number; n: number }> = {};
  const failures: Failure[] = [];
  for (const t of turns) {
    const failed = checks(t).filter((c) => !c.ok);
    const ok = failed.length === 0;
    if (!ok) failures.push({ caseId: t.caseId, turn: t.turn, text: t.text, failed });
    byCase.set(t.caseId, (byCase.get(t.caseId) ?? true) && ok);
    for (const tag of t.tags) {
      const x = (byTag[tag] ??= { ok: 0, n: 0 });
      x.n++;
      if (ok) x.ok++;
    }
  }
  const calls = turns.flatMap((t) => t.calls);
  const roles: Record<string, RoleUse> = {};
  for (const c of calls) {
    const r = (roles[c.role] ??= { calls: 0, meanPromptTokens: 0, meanLatencyMs: 0, failedCalls: 0 });
    r.meanPromptTokens = (r.meanPromptTokens * r.calls + c.promptTokens) / (r.calls + 1);
    r.meanLatencyMs = (r.meanLatencyMs * r.calls + c.latencyMs) / (r.calls + 1);
    r.calls++;
    if (typeof c.reply === "object" && (c.reply.status || c.reply.hangUp || c.reply.cutAfter)) r.failedCalls++;
  }
  const prompt = calls.reduce((s, c) => s + c.promptTokens, 0);
  const ms = turns.map((t) => t.ms);
  const passing = [...byCase].filter(([, ok]) => ok).map(([id]) => id);
  return {
    turns: turns.length,
    cases: byCase.size,
    turnPass: ratio(turns.length - failures.length, turns.length),
    casePass: ratio(passing.length, byCase.size),
    passingCases: passing.sort(),
    failures,
    byTag: Object.fromEntries(
      Object.entries(byTag)
        .sort()
        .map(([k, v]) => [k, ratio(v.ok, v.n)]),
    ),
    roles,
    tokens: {
      prompt,
      completion: calls.reduce((s, c) => s + c.completionTokens, 0),
      promptPerTurn: turns.length ? prompt / turns.length : 0,
      estimated: calls.some((c) => c.estimated),
    },
    latency: {
      p50: percentile(ms, 50),
      p95: percentile(ms, 95),
      mean: ms.length ? ms.reduce((a, b) => a + b, 0) / ms.length : 0,
    },
  };
}

export interface WorkbenchMetrics extends CommonMetrics {
  plan: Ratio;
  routing: Ratio;
  resolution: Ratio;
  clarification: {
    tp: number;
    fp: number;
    fn: number;
    tn: number;
    precision: number | null;
    recall: number | null;
    candidates: Ratio;
  };
  replyKind: Ratio;
  citations: Ratio;
  validation: Ratio;
  callsExact: Ratio;
  callsPerRequest: Record<string, number>;
  seedTable: Array<{ row: SeedRow; label: string; turns: number; meanPrep: number; meanFinal: number; within: Ratio }>;
  /** Reply turns whose previous turn asked nothing: the run left the labelled path (live runs). */
  diverged: number;
  /** Requests beyond the seed's hard budget: more than 2 preparatory or more than 1 final call that the model answered. */
  overBudget: Ratio;
  /** How each model stage did on the turns where it was actually called. */
  stages: Record<"planner" | "reranker" | "classifier" | "answer", { turns: number; accuracy: Ratio; measure: string }>;
}

/** The role answered this turn itself (in a live run: not only injected faults or mistakes). */
const has = (t: { calls: CallRecord[] }, role: string) => t.calls.some((c) => c.role === role && !c.injected);
const checkOk = (t: WorkbenchTurnResult, names: string[]) =>
  workbenchChecks(t)
    .filter((c) => names.includes(c.name))
    .every((c) => c.ok);

export function workbenchMetrics(turns: WorkbenchTurnResult[]): WorkbenchMetrics {
  const labelled = (f: (t: WorkbenchTurnResult) => boolean) => turns.filter(f);
  const planned = labelled((t) => !!t.expect.plan);
  const resolved = labelled((t) => !!t.expect.resolution);
  const clarTurns = labelled((t) => t.expect.outcome !== "error");
  const tp = clarTurns.filter((t) => t.expect.outcome === "clarification" && t.observed.outcome === "clarification");
  const fp = clarTurns.filter(
    (t) => t.expect.outcome !== "clarification" && t.observed.outcome === "clarification",
  ).length;
  const fn = clarTurns.filter(
    (t) => t.expect.outcome === "clarification" && t.observed.outcome !== "clarification",
  ).length;
  const tn = clarTurns.length - tp.length - fp - fn;
  const withCands = tp.filter((t) => t.expect.clarification?.candidates || t.expect.clarification?.candidatesInclude);
  const callChecks = turns.flatMap((t) => workbenchChecks(t).filter((c) => c.name.startsWith("calls.")));
  const perRole = (role: string) =>
    turns.length ? turns.reduce((s, t) => s + (countCalls(t.calls)[role] ?? 0), 0) / turns.length : 0;
  const rows = new Map<SeedRow, WorkbenchTurnResult[]>();
  for (const t of turns) {
    const r = seedRowOf(t);
    if (r) rows.set(r, [...(rows.get(r) ?? []), t]);
  }
  // Calls the model answered: a failed attempt and its retry are one call of the design.
  const answered = (t: WorkbenchTurnResult) => countCalls(t.calls.filter((c) => typeof c.reply === "string"));
  const prepOf = (t: WorkbenchTurnResult) => {
    const n = answered(t);
    return (n.planner ?? 0) + (n.reranker ?? 0) + (n.classifier ?? 0);
  };
  const finalOf = (t: WorkbenchTurnResult) => answered(t).answer ?? 0;
  const stage = (role: string, names: string[], measure: string) => {
    const ts = turns.filter((t) => has(t, role) && workbenchChecks(t).some((c) => names.includes(c.name)));
    return { turns: ts.length, accuracy: count(ts, (t) => checkOk(t, names)), measure };
  };
  return {
    ...common(turns, workbenchChecks),
    plan: count(planned, (t) => planMatches(t).plan),
    routing: count(planned, (t) => planMatches(t).routing),
    resolution: count(resolved, (t) => resolutionMatches(t).ok),
    clarification: {
      tp: tp.length,
      fp,
      fn,
      tn,
      precision: tp.length + fp ? tp.length / (tp.length + fp) : null,
      recall: tp.length + fn ? tp.length / (tp.length + fn) : null,
      candidates: count(withCands, (t) => checkOk(t, ["clarification.candidates"])),
    },
    replyKind: count(
      labelled((t) => !!t.expect.replyKind),
      (t) => t.observed.replyKind === t.expect.replyKind,
    ),
    citations: count(
      labelled((t) => !!t.expect.citations),
      (t) => checkOk(t, ["citations"]),
    ),
    validation: count(
      labelled((t) => t.expect.validationOk !== undefined),
      (t) => t.observed.validationOk === t.expect.validationOk,
    ),
    callsExact: ratio(callChecks.filter((c) => c.ok).length, callChecks.length),
    callsPerRequest: Object.fromEntries(["planner", "reranker", "classifier", "answer"].map((r) => [r, perRole(r)])),
    seedTable: [...rows].map(([row, ts]) => ({
      row,
      label: SEED_TABLE[row].label,
      turns: ts.length,
      meanPrep: ts.reduce((s, t) => s + prepOf(t), 0) / ts.length,
      meanFinal: ts.reduce((s, t) => s + finalOf(t), 0) / ts.length,
      // Judged where the request ended as labelled (a wrong outcome is an accuracy failure, counted there).
      within: count(
        ts.filter((t) => t.observed.outcome === t.expect.outcome),
        (t) => withinRow(row, prepOf(t), finalOf(t)),
      ),
    })),
    diverged: turns.filter((t) => t.diverged).length,
    overBudget: count(turns, (t) => prepOf(t) > 2 || finalOf(t) > 1),
    stages: {
      planner: stage("planner", ["plan", "routing"], "plan + routing"),
      reranker: stage("reranker", ["resolution", "outcome"], "resolution + outcome"),
      classifier: stage("classifier", ["replyKind"], "reply kind"),
      answer: stage("answer", ["citations", "validation"], "citations + validation"),
    },
  };
}

export interface ClinicMetrics extends CommonMetrics {
  router: Ratio;
  branch: Ratio;
  step: Ratio;
  slots: Ratio;
  events: Ratio;
  escalation: Ratio;
  callsExact: Ratio;
  callsPerTurn: Record<string, number>;
  stages: Record<"router" | "branch", { turns: number; accuracy: Ratio; measure: string }>;
}

export function clinicMetrics(turns: ClinicTurnResult[]): ClinicMetrics {
  const by = (name: string) => {
    const cs = turns.flatMap((t) => clinicChecks(t).filter((c) => c.name === name));
    return ratio(cs.filter((c) => c.ok).length, cs.length);
  };
  const callChecks = turns.flatMap((t) => clinicChecks(t).filter((c) => c.name.startsWith("calls.")));
  const stage = (role: string, names: string[], measure: string) => {
    const ts = turns.filter((t) => has(t, role) && clinicChecks(t).some((c) => names.includes(c.name)));
    return {
      turns: ts.length,
      accuracy: count(ts, (t) =>
        clinicChecks(t)
          .filter((c) => names.includes(c.name))
          .every((c) => c.ok),
      ),
      measure,
    };
  };
  return {
    ...common(turns, clinicChecks),
    router: by("router"),
    branch: by("branch"),
    step: by("step"),
    slots: by("slots"),
    events: by("events"),
    escalation: by("escalationReason"),
    callsExact: ratio(callChecks.filter((c) => c.ok).length, callChecks.length),
    callsPerTurn: Object.fromEntries(
      ["router", "branch"].map((r) => [
        r,
        turns.length ? turns.reduce((s, t) => s + (countCalls(t.calls)[r] ?? 0), 0) / turns.length : 0,
      ]),
    ),
    stages: {
      router: stage("router", ["router"], "router decision"),
      branch: stage("branch", ["branch", "step", "slots", "events", "escalationReason"], "branch, step, slots, events"),
    },
  };
}
