// One evidence turn through the driver: the machine's effects are run here — the four model
// modes, the MCP executor — each leaving a numbered trace stage; the turn commits in one
// transaction (snapshot, messages, artifacts, run outcome) and `final` follows the commit.
import type { Run } from "../../driver/run";
import type { EvidenceEvents } from "./contract";
import { runTurn } from "../../driver/turn";
import type { ConversationState, ToolRun } from "./artifacts";
import { packageOf, resolveChoice } from "./answer-choice";
import { debugView } from "./debug-view";
import { executePlan } from "./executor";
import type { EvidenceTools } from "./mcp-config";
import {
  answerInput,
  chooseAnswer,
  criticWithModel,
  EVIDENCE_PROMPTS,
  interpretWithModel,
  planWithModel,
} from "./turn-model-steps";
import { interpretDeterministic } from "./interpret-rules";
import { extendToFloor, missingCoverage, normalizePlan, planFor, validatePlan } from "./plan-rules";
import { runStages } from "../../driver/stages";
import { configuredSecrets } from "../../http/secrets";
import { EVIDENCE_STAGES } from "./trace";
import { evidenceSpec, type EvidenceEffect, type TurnWork } from "./conversation.machine";
import { AppError } from "../../driver/errors";
import { evidenceRunInsert } from "./store/evidence-runs";
import { messagesInsert } from "../../storage/messages";
import type { Deps } from "../../http/deps";

export interface EvidenceTurnArgs {
  deps: Deps;
  run: Run<EvidenceEvents>;
  tools: EvidenceTools;
  conversationId: string;
  tenantId: string;
  text: string;
}

type Fx<T extends EvidenceEffect["type"]> = Extract<EvidenceEffect, { type: T }>;

/** Splits text into word-sized deltas, the way a model streams. */
const words = (text: string) => text.match(/\S+\s*|\s+/g) ?? [];

export async function runEvidenceTurn(a: EvidenceTurnArgs): Promise<void> {
  const { deps, run } = a;
  const llm = deps.llm;
  const offline = llm.offline;
  const trace = runStages(run, {
    stages: EVIDENCE_STAGES,
    dir: deps.config.aiDebug ? deps.config.debugDir : null,
    secrets: configuredSecrets(deps.config),
    log: deps.log,
    // The stage list and the debug view are stored with every run (evidence_runs.artifacts).
    keep: true,
  });
  const modelCalls = { preparatory: 0, final: 0 };
  let recorded: { work: TurnWork; state: ConversationState } | null = null;
  let contextStaged = false;
  const since = (t: number) => performance.now() - t;
  const signal = run.signal;
  // Kept with the run (evidence_runs.artifacts): what a model said that was not used, and why.
  const rejected: { stage: string; issues: string[]; output?: unknown }[] = [];
  let answerStarted = 0;
  // A failed model call's details for the stage the rule step then records (02, 04).
  let interpreterCall: unknown = "offline";
  let plannerCall: unknown = "offline";

  const stageContext = (e: Pick<Fx<"effect.plan">, "scope">) => {
    if (contextStaged) return;
    contextStaged = true;
    trace.record(
      "03",
      "ok",
      {
        gate: e.scope.gate,
        premises: e.scope.premises,
        reasons: e.scope.reasons,
        clarifyingQuestion: e.scope.clarifying_question,
        counterparty: e.scope.counterparty,
        time: e.scope.time,
      },
      0,
    );
  };

  trace.record(
    "00",
    "ok",
    {
      runId: run.id,
      conversationId: a.conversationId,
      kind: "evidence",
      machine: { id: evidenceSpec.id, version: evidenceSpec.version },
      models: offline
        ? "offline"
        : {
            interpreter: llm.modelFor("planner"),
            planner: llm.modelFor("planner"),
            critic: llm.modelFor("planner"),
            answer: llm.modelFor("answer"),
          },
      mcp: a.tools.caller.label,
      toolTimeoutMs: a.tools.settings.timeoutMs,
    },
    0,
  );
  trace.record("01", "ok", { text: a.text }, 0);
  await a.tools.prepare();

  try {
    await runTurn({
      sql: deps.db.sql,
      run,
      spec: evidenceSpec,
      key: a.conversationId,
      conversationId: a.conversationId,
      input: { conversationId: a.conversationId },
      events: [{ type: "user.message", text: a.text, requestId: run.id, offline }],
      log: {},
      effects: {
        "effect.interpret": async (e) => {
          // No model configured: the step fails at once and the machine takes the rules' way.
          if (offline) return { type: "model.failed", role: "interpreter", codes: ["offline"], issues: [] };
          const t = performance.now();
          const r = await interpretWithModel(llm, e.text, e.state, { signal });
          modelCalls.preparatory += r.calls;
          const model = { calls: r.calls, issues: r.issues, prompt: r.prompt, repaired: r.repaired };
          if (!r.value) {
            // The machine takes the rules' way; their stage 02 names this call.
            interpreterCall = model;
            rejected.push({ stage: "interpretation", issues: r.issues });
            return { type: "model.failed", role: "interpreter", codes: r.failures, issues: r.issues };
          }
          trace.record(
            "02",
            "ok",
            { via: "llm", output: r.value, model, modelIssue: null, originalQuestion: e.text },
            since(t),
          );
          return { type: "interpreted", output: r.value, via: "llm" };
        },
        "effect.interpretByRules": (e) => {
          const t = performance.now();
          const output = interpretDeterministic(e.text, e.state);
          trace.record(
            "02",
            output ? "ok" : "failed",
            {
              via: "deterministic",
              output,
              model: interpreterCall,
              modelIssue: e.modelIssue,
              originalQuestion: e.text,
            },
            since(t),
          );
          return { type: "interpreted", output, via: "deterministic" };
        },
        "effect.plan": async (e) => {
          stageContext(e);
          if (offline) return { type: "model.failed", role: "planner", codes: ["offline"], issues: [] };
          const t = performance.now();
          const builtIn = planFor(e.scope, run.id);
          let plan = builtIn;
          let coverage: { missing: string[]; added: string[]; action: "extended_to_built_in_floor" } | null = null;
          const r = await planWithModel(llm, e.frame, e.scope, (p) => validatePlan(p, e.scope), { signal });
          modelCalls.preparatory += r.calls;
          const model = { calls: r.calls, issues: r.issues, prompt: r.prompt, repaired: r.repaired };
          if (!r.value) {
            // The machine takes the built-in plan; its stage 04 names this call.
            plannerCall = model;
            if (r.issues.length) rejected.push({ stage: "plan", issues: r.issues });
            return { type: "model.failed", role: "planner", codes: r.failures, issues: r.issues };
          }
          const candidate = normalizePlan(r.value, e.scope, run.id);
          // The built-in plan's checks are the floor: a shallower model plan would prove less and still look complete.
          const missing = missingCoverage(candidate, builtIn);
          if (missing.length) {
            const extended = extendToFloor(candidate, builtIn);
            coverage = { missing, added: extended.added, action: "extended_to_built_in_floor" };
            rejected.push({
              stage: "plan",
              issues: missing.map((m) => `план модели не покрывает критерии успеха: ${m}`),
              output: r.value,
            });
            // The extended plan must still pass the checks every plan passes; otherwise the built-in one runs.
            const issues = validatePlan(
              {
                goal: extended.plan.goal,
                steps: extended.plan.steps,
                fallbacks: extended.plan.fallbacks,
                stop_conditions: extended.plan.stop_conditions,
              },
              e.scope,
            );
            plan = issues.length ? builtIn : extended.plan;
          } else plan = candidate;
          trace.record("04", "ok", { plannedBy: plan.planned_by, plan, model, coverage }, since(t));
          return { type: "planned", plan };
        },
        "effect.planByRules": (e) => {
          stageContext(e);
          const plan = planFor(e.scope, run.id);
          trace.record("04", "ok", { plannedBy: plan.planned_by, plan, model: plannerCall, coverage: null }, 0);
          return { type: "planned", plan };
        },
        "effect.execute": async (e) => {
          const t = performance.now();
          const r = await executePlan(e.plan, a.tools.caller, {
            timeoutMs: a.tools.settings.timeoutMs,
            maxForEach: a.tools.settings.maxForEach,
            signal,
          });
          if (signal.aborted) throw new AppError("internal", "client went away");
          const brief = (x: ToolRun) => ({
            ...x,
            output:
              x.output && JSON.stringify(x.output).length > 4000
                ? "(сокращено; полностью — в evidence_runs)"
                : x.output,
          });
          trace.record(
            "05",
            r.toolRuns.some(
              (x) =>
                x.error_code && x.status !== "no_match" && x.status !== "unbound_entity" && x.status !== "ambiguous",
            )
              ? "failed"
              : "ok",
            { mcp: a.tools.caller.label, toolRuns: r.toolRuns.map(brief), truncated: r.truncated },
            since(t),
          );
          return { type: "executed", toolRuns: r.toolRuns, truncated: r.truncated };
        },
        "effect.critic": async (e) => {
          stageContext(e);
          trace.record("06", e.bundle.facts.length ? "ok" : "skipped", e.bundle, 0);
          const t = performance.now();
          if (offline) {
            trace.record("07", "ok", { rules: e.coverage, model: "offline" }, since(t));
            return { type: "criticized", critique: null, status: "offline" };
          }
          const r = await criticWithModel(llm, e.frame, e.bundle, e.coverage, { signal });
          modelCalls.preparatory += r.calls;
          trace.record(
            "07",
            "ok",
            { rules: e.coverage, model: { value: r.value, calls: r.calls, issues: r.issues, prompt: r.prompt } },
            since(t),
          );
          if (r.value) return { type: "criticized", critique: r.value, status: "used", note: null };
          if (r.issues.length) rejected.push({ stage: "coverage", issues: r.issues });
          return { type: "model.failed", role: "critic", codes: r.failures, issues: r.issues };
        },
        "effect.answer": async (e) => {
          answerStarted = performance.now();
          trace.record(
            "08",
            "ok",
            {
              prompts: EVIDENCE_PROMPTS,
              roles: { interpreter: "planner", planner: "planner", critic: "planner", answer: "answer" },
            },
            0,
          );
          if (offline) {
            for (const d of words(e.draft.user_facing_answer)) run.emit("token", { delta: d });
            return { type: "answered", choice: null };
          }
          // The model chooses claims (structured output); the engine renders the choice, and only
          // that rendering is streamed: no token is shown that is later replaced.
          const r = await chooseAnswer(llm, answerInput(e.frame, e.text, e.scope, e.coverage, e.menu), { signal });
          modelCalls.final += r.calls;
          if (signal.aborted || r.failures.includes("cancelled")) throw new AppError("internal", "client went away");
          if (!r.value)
            return { type: "model.failed", role: "answer", codes: r.failures, issues: r.issues, released: "" };
          const shown = packageOf(resolveChoice(e.menu, r.value), e.draft.clarifying_question, "model");
          for (const d of words(shown.user_facing_answer)) run.emit("token", { delta: d });
          return { type: "answered", choice: r.value, released: shown.user_facing_answer };
        },
        "effect.showDraft": (e) => {
          for (const d of words(e.text)) run.emit("token", { delta: d });
          return { type: "draft.shown" };
        },
        "effect.record": async (e) => {
          recorded = { work: e.work, state: e.state };
          const w = e.work;
          if (w.validation && !w.validation.ok) rejected.push({ stage: "answer", issues: w.validation.issues });
          trace.record(
            "09",
            w.validation && !w.validation.ok ? "failed" : "ok",
            {
              composedBy: w.answer!.composed_by,
              validation: w.validation,
              rejectedModelAnswer: w.rejected,
              package: w.answer,
            },
            answerStarted ? since(answerStarted) : 0,
          );
          trace.record(
            "10",
            "ok",
            debugView({
              frame: w.frame,
              scope: w.scope,
              plan: w.plan,
              toolRuns: w.toolRuns,
              bundle: w.bundle,
              coverage: w.coverage!,
              state: e.state,
            }),
            0,
          );
          return undefined;
        },
      },
      // One commit statement: the snapshot, the log, the run, the messages and the run's artifacts.
      writes: (s, when) => {
        const last = s.context.last!;
        const w = recorded!.work;
        return [
          ...messagesInsert(
            deps.db.sql,
            a.conversationId,
            [
              { role: "user", text: a.text },
              {
                role: "assistant",
                text: last.answer.user_facing_answer,
                meta: { runId: run.id, outcome: last.outcome, reasonCodes: last.reasonCodes },
              },
            ],
            run.id,
            { when },
          ),
          evidenceRunInsert(
            deps.db.sql,
            {
              runId: run.id,
              conversationId: a.conversationId,
              tenantId: a.tenantId,
              turn: last.turn,
              question: a.text,
              outcome: last.outcome,
              reasonCodes: last.reasonCodes,
              artifacts: {
                query_frame: w.frame,
                premises: w.scope?.premises ?? [],
                execution_plan: w.plan,
                tool_runs: w.toolRuns,
                evidence_bundle: w.bundle,
                coverage_report: w.coverage,
                final_answer_package: w.answer,
                // Every claim the answer could state this run, with its kind and provenance (the model chose from it).
                claims_menu: w.menu,
                validation: w.validation,
                rejected_answer: w.rejected,
                conversation_state: s.context.state,
                model_calls: modelCalls,
                stages: trace.records.map(({ stageId, name, status, durationMs }) => ({
                  stageId,
                  name,
                  status,
                  durationMs,
                })),
                // The readable debug view and the model outputs that were not used, retrievable after the request.
                debug_view: trace.records.find((x) => x.stageId === "10")?.data ?? null,
                rejected_model_outputs: rejected,
              },
            },
            when,
          ),
        ];
      },
      closing: (s) => {
        const last = s.context.last!;
        // Tokens already shown that are not the answer: the client replaces them before `final`.
        const replaced = last.replacement ? [{ event: "answer_replaced" as const, data: last.replacement }] : [];
        return [
          ...replaced,
          {
            event: "final",
            data: {
              conversationId: a.conversationId,
              runId: run.id,
              turn: last.turn,
              outcome: last.outcome,
              reasonCodes: last.reasonCodes,
              answer: last.answer.user_facing_answer,
              package: last.answer,
              coverage: last.coverage,
              premises: recorded?.work.scope?.premises ?? [],
              state: s.context.state,
              validation: last.validation ?? { ok: true, issues: [], citations: [] },
              modelCalls,
            },
          },
        ];
      },
      outcome: (s) => ({ outcome: s.context.last!.outcome, reasonCodes: s.context.last!.reasonCodes }),
    });
  } finally {
    trace.finish();
  }
}
