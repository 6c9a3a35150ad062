// The Evidence effect handlers: each answers one effect of the machine with one event — the four
// model modes, the MCP executor, the token stream — and leaves its numbered trace stage. What a
// later stage or the commit needs of an earlier one (a failed model call's details, when the answer
// started, the recorded turn) is kept on the turn's side record (`TurnSide`), never in a `let`.
import { AppError } from "../../driver/errors";
import type { Run } from "../../driver/run";
import { runStages } from "../../driver/stages";
import type { Llm } from "../../llm/client";
import { packageOf, resolveChoice } from "./answer-choice";
import type { ConversationState, ExecutionPlan, ToolRun } from "./artifacts";
import type { EvidenceEvents } from "./contract";
import type { EvidenceEffect, EvidenceEvent, TurnWork } from "./conversation-types";
import { debugView } from "./debug-view";
import { executePlan } from "./executor";
import type { TurnScope } from "./frame-resolve";
import { interpretDeterministic } from "./interpret-rules";
import type { EvidenceTools } from "./mcp-config";
import type { PlannerOutput } from "./model-outputs";
import { extendToFloor, missingCoverage, normalizePlan, planFor, validatePlan, withNameCheck } from "./plan-rules";
import {
  answerInput,
  chooseAnswer,
  criticWithModel,
  EVIDENCE_PROMPTS,
  interpretWithModel,
  planWithModel,
} from "./turn-model-steps";

type Fx<T extends EvidenceEffect["type"]> = Extract<EvidenceEffect, { type: T }>;

/** What one turn's handlers share: the trace, the counters, and what a later stage reads of an earlier one. */
export interface TurnSide {
  run: Run<EvidenceEvents>;
  llm: Llm;
  offline: boolean;
  tools: EvidenceTools;
  trace: ReturnType<typeof runStages>;
  modelCalls: { preparatory: number; final: number };
  /** Kept with the run (evidence_runs.artifacts): what a model said that was not used, and why. */
  rejected: { stage: string; issues: string[]; output?: unknown }[];
  notes: {
    recorded: { work: TurnWork; state: ConversationState } | null;
    contextStaged: boolean;
    answerStarted: number;
    /** A failed model call's details for the stage the rule step then records (02, 04). */
    interpreterCall: unknown;
    plannerCall: unknown;
  };
}

const since = (t: number) => performance.now() - t;
/** Splits text into word-sized deltas, the way a model streams. */
const words = (text: string) => text.match(/\S+\s*|\s+/g) ?? [];
const stream = (t: TurnSide, text: string) => {
  for (const d of words(text)) t.run.emit("token", { delta: d });
};
const offlineFailure = (role: "interpreter" | "planner"): EvidenceEvent => ({
  type: "model.failed",
  role,
  codes: ["offline"],
  issues: [],
});

function stageContext(t: TurnSide, e: Pick<Fx<"effect.plan">, "scope">) {
  if (t.notes.contextStaged) return;
  t.notes.contextStaged = true;
  const s = e.scope;
  t.trace.record(
    "03",
    "ok",
    {
      gate: s.gate,
      premises: s.premises,
      reasons: s.reasons,
      clarifyingQuestion: s.clarifying_question,
      counterparty: s.counterparty,
      time: s.time,
    },
    0,
  );
}

async function interpret(t: TurnSide, e: Fx<"effect.interpret">): Promise<EvidenceEvent> {
  // No model configured: the step fails at once and the machine takes the rules' way.
  if (t.offline) return offlineFailure("interpreter");
  const started = performance.now();
  const r = await interpretWithModel(t.llm, e.text, e.state, { signal: t.run.signal });
  t.modelCalls.preparatory += r.calls;
  const model = { calls: r.calls, issues: r.issues, prompt: r.prompt, repaired: r.repaired };
  if (!r.value) {
    // The machine takes the rules' way; their stage 02 names this call.
    t.notes.interpreterCall = model;
    t.rejected.push({ stage: "interpretation", issues: r.issues });
    return { type: "model.failed", role: "interpreter", codes: r.failures, issues: r.issues };
  }
  const data = { via: "llm", output: r.value, model, modelIssue: null, originalQuestion: e.text };
  t.trace.record("02", "ok", data, since(started));
  return { type: "interpreted", output: r.value, via: "llm" };
}

function interpretByRules(t: TurnSide, e: Fx<"effect.interpretByRules">): EvidenceEvent {
  const started = performance.now();
  const output = interpretDeterministic(e.text, e.state);
  const data = {
    via: "deterministic",
    output,
    model: t.notes.interpreterCall,
    modelIssue: e.modelIssue,
    originalQuestion: e.text,
  };
  t.trace.record("02", output ? "ok" : "failed", data, since(started));
  return { type: "interpreted", output, via: "deterministic" };
}

/**
 * The model's plan held to the built-in plan's floor: a shallower plan would prove less and still
 * look complete, so it is extended with the missing steps — or, if the extension breaks the checks
 * every plan passes, replaced by the built-in plan.
 */
export function floorPlan(value: PlannerOutput, scope: TurnScope, builtIn: ExecutionPlan, runId: string) {
  const candidate = normalizePlan(value, scope, runId);
  const missing = missingCoverage(candidate, builtIn);
  if (!missing.length) return { plan: candidate, coverage: null, rejected: null };
  const extended = extendToFloor(candidate, builtIn);
  const { goal, steps, fallbacks, stop_conditions } = extended.plan;
  const broken = validatePlan({ goal, steps, fallbacks, stop_conditions }, scope).length > 0;
  return {
    plan: broken ? builtIn : extended.plan,
    coverage: { missing, added: extended.added, action: "extended_to_built_in_floor" as const },
    rejected: {
      stage: "plan",
      issues: missing.map((m) => `план модели не покрывает критерии успеха: ${m}`),
      output: value as unknown,
    },
  };
}

async function plan(t: TurnSide, e: Fx<"effect.plan">): Promise<EvidenceEvent> {
  stageContext(t, e);
  if (t.offline) return offlineFailure("planner");
  const started = performance.now();
  const builtIn = planFor(e.scope, t.run.id);
  const check = (p: PlannerOutput) => validatePlan(p, e.scope);
  const r = await planWithModel(t.llm, e.frame, e.scope, check, { signal: t.run.signal });
  t.modelCalls.preparatory += r.calls;
  const model = { calls: r.calls, issues: r.issues, prompt: r.prompt, repaired: r.repaired };
  if (!r.value) {
    // The machine takes the built-in plan; its stage 04 names this call.
    t.notes.plannerCall = model;
    if (r.issues.length) t.rejected.push({ stage: "plan", issues: r.issues });
    return { type: "model.failed", role: "planner", codes: r.failures, issues: r.issues };
  }
  const floored = floorPlan(r.value, e.scope, builtIn, t.run.id);
  const chosen = { ...floored, plan: withNameCheck(floored.plan) };
  if (chosen.rejected) t.rejected.push(chosen.rejected);
  const data = { plannedBy: chosen.plan.planned_by, plan: chosen.plan, model, coverage: chosen.coverage };
  t.trace.record("04", "ok", data, since(started));
  return { type: "planned", plan: chosen.plan };
}

function planByRules(t: TurnSide, e: Fx<"effect.planByRules">): EvidenceEvent {
  stageContext(t, e);
  const built = withNameCheck(planFor(e.scope, t.run.id));
  t.trace.record(
    "04",
    "ok",
    { plannedBy: built.planned_by, plan: built, model: t.notes.plannerCall, coverage: null },
    0,
  );
  return { type: "planned", plan: built };
}

/** A tool output too large for the trace is named, not copied (the whole of it is in evidence_runs). */
const brief = (x: ToolRun) => ({
  ...x,
  output: x.output && JSON.stringify(x.output).length > 4000 ? "(сокращено; полностью — в evidence_runs)" : x.output,
});
/** A tool fault (not a finding such as "no match" or an ambiguous name). */
const faulted = (x: ToolRun) =>
  !!x.error_code && x.status !== "no_match" && x.status !== "unbound_entity" && x.status !== "ambiguous";

async function execute(t: TurnSide, e: Fx<"effect.execute">): Promise<EvidenceEvent> {
  const started = performance.now();
  const { settings, caller } = t.tools;
  const r = await executePlan(e.plan, caller, {
    timeoutMs: settings.timeoutMs,
    maxForEach: settings.maxForEach,
    signal: t.run.signal,
  });
  if (t.run.signal.aborted) throw new AppError("internal", "client went away");
  const data = { mcp: caller.label, toolRuns: r.toolRuns.map(brief), truncated: r.truncated };
  t.trace.record("05", r.toolRuns.some(faulted) ? "failed" : "ok", data, since(started));
  return { type: "executed", toolRuns: r.toolRuns, truncated: r.truncated };
}

async function critic(t: TurnSide, e: Fx<"effect.critic">): Promise<EvidenceEvent> {
  stageContext(t, e);
  t.trace.record("06", e.bundle.facts.length ? "ok" : "skipped", e.bundle, 0);
  const started = performance.now();
  if (t.offline) {
    t.trace.record("07", "ok", { rules: e.coverage, model: "offline" }, since(started));
    return { type: "criticized", critique: null, status: "offline" };
  }
  const r = await criticWithModel(t.llm, e.frame, e.bundle, e.coverage, { signal: t.run.signal });
  t.modelCalls.preparatory += r.calls;
  const model = { value: r.value, calls: r.calls, issues: r.issues, prompt: r.prompt };
  t.trace.record("07", "ok", { rules: e.coverage, model }, since(started));
  if (r.value) return { type: "criticized", critique: r.value, status: "used", note: null };
  if (r.issues.length) t.rejected.push({ stage: "coverage", issues: r.issues });
  return { type: "model.failed", role: "critic", codes: r.failures, issues: r.issues };
}

async function answer(t: TurnSide, e: Fx<"effect.answer">): Promise<EvidenceEvent> {
  t.notes.answerStarted = performance.now();
  const roles = { interpreter: "planner", planner: "planner", critic: "planner", answer: "answer" };
  t.trace.record("08", "ok", { prompts: EVIDENCE_PROMPTS, roles }, 0);
  if (t.offline) {
    stream(t, e.draft.user_facing_answer);
    return { type: "answered", choice: null };
  }
  // The model chooses claims (structured output); the engine renders the choice, and only that
  // rendering is streamed: no token is shown that is later replaced.
  const input = answerInput(e.frame, e.text, e.scope, e.coverage, e.menu);
  const r = await chooseAnswer(t.llm, input, { signal: t.run.signal });
  t.modelCalls.final += r.calls;
  if (t.run.signal.aborted || r.failures.includes("cancelled")) throw new AppError("internal", "client went away");
  if (!r.value) return { type: "model.failed", role: "answer", codes: r.failures, issues: r.issues, released: "" };
  const shown = packageOf(resolveChoice(e.menu, r.value), e.draft.clarifying_question, "model");
  stream(t, shown.user_facing_answer);
  return { type: "answered", choice: r.value, released: shown.user_facing_answer };
}

function record(t: TurnSide, e: Fx<"effect.record">): undefined {
  t.notes.recorded = { work: e.work, state: e.state };
  const w = e.work;
  const refused = !!w.validation && !w.validation.ok;
  if (refused) t.rejected.push({ stage: "answer", issues: w.validation!.issues });
  const data = {
    composedBy: w.answer!.composed_by,
    validation: w.validation,
    rejectedModelAnswer: w.rejected,
    package: w.answer,
  };
  t.trace.record("09", refused ? "failed" : "ok", data, t.notes.answerStarted ? since(t.notes.answerStarted) : 0);
  const view = debugView({
    frame: w.frame,
    scope: w.scope,
    plan: w.plan,
    toolRuns: w.toolRuns,
    bundle: w.bundle,
    coverage: w.coverage!,
    state: e.state,
  });
  t.trace.record("10", "ok", view, 0);
  return undefined;
}

/** The map of handlers the driver answers the machine's effects with. */
export function evidenceEffects(t: TurnSide) {
  return {
    "effect.interpret": (e: Fx<"effect.interpret">) => interpret(t, e),
    "effect.interpretByRules": (e: Fx<"effect.interpretByRules">) => interpretByRules(t, e),
    "effect.plan": (e: Fx<"effect.plan">) => plan(t, e),
    "effect.planByRules": (e: Fx<"effect.planByRules">) => planByRules(t, e),
    "effect.execute": (e: Fx<"effect.execute">) => execute(t, e),
    "effect.critic": (e: Fx<"effect.critic">) => critic(t, e),
    "effect.answer": (e: Fx<"effect.answer">) => answer(t, e),
    "effect.showDraft": (e: Fx<"effect.showDraft">): EvidenceEvent => {
      stream(t, e.text);
      return { type: "draft.shown" };
    },
    "effect.record": async (e: Fx<"effect.record">) => record(t, e),
  };
}
