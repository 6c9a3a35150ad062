// The evidence workflow's dialogue (seed 002 §8) as a pure statechart: interpret → gate →
// plan → execute → assess (rules, always) → critic → answer, with ConversationState carried
// between turns. Model calls and MCP tools are effects the driver runs; their results come
// back as events, and every decision between them is a pure function of the artifacts.
// A model that fails (after its one repair retry) is the `model.failed` event, and the
// machine, not the handler, takes the honest way on: the rules' interpreter (its scope says
// MODEL_OUTPUT_INVALID or MODEL_REQUIRED), the built-in plan, the rules' coverage alone, the
// answer composed from evidence. Offline, each model step fails at once (code `offline`) and
// the same rule states run.
import { assign, emit, setup } from "xstate";
import type { MachineSpec } from "../../driver/machine-spec";
import { AnswerChoice, packageOf, resolveChoice } from "./answer-choice";
import { legacyProse } from "./answer-package";
import {
  emptyConversationState,
  type ConversationState,
  type CoverageReport,
  type EvidenceBundle,
  type ExecutionPlan,
  type FinalAnswerPackage,
  type QueryFrame,
  type ToolRun,
} from "./artifacts";
import type { AnswerValidation } from "./claim-check";
import type { ClaimsMenu } from "./claims-menu";
import { composeWithMenu } from "./compose";
import { advanceState } from "./conversation-state";
import { critiqueGround, mergeCritique, narrowedByInferredRole, ruleCoverage } from "./critic-rules";
import { buildEvidence, emptyBundle } from "./evidence-builder";
import { buildFrame, resolveScope, ruleFrame, type TurnScope } from "./frame-resolve";
import type { CriticOutput, InterpreterOutput } from "./model-outputs";
import type { OutcomeClass, ReasonCode } from "./reason-codes";

export interface TurnWork {
  requestId: string;
  text: string;
  turn: number;
  offline: boolean;
  frame: QueryFrame | null;
  scope: TurnScope | null;
  plan: ExecutionPlan | null;
  toolRuns: ToolRun[];
  bundle: EvidenceBundle;
  coverage: CoverageReport | null;
  clarifying: string | null;
  draft: FinalAnswerPackage | null;
  /** This run's claims: everything an answer may state (claims-menu.ts). */
  menu: ClaimsMenu | null;
  answer: FinalAnswerPackage | null;
  validation: AnswerValidation | null;
  /** The model's answer when it was not shown (rejected, or broken off): kept with the run, never shown. */
  rejected: { text: string; released: string; issues: string[] } | null;
  /** Why the connected interpreter model was not used (its failure), when it was not. */
  modelIssue: ModelIssue | null;
}

export type ModelIssue = "invalid_output" | "model_unavailable";

/** The model steps of a turn, as `model.failed` names them. */
export type ModelStep = "interpreter" | "planner" | "critic" | "answer";

/** The client was shown model text that is not the answer: it must drop it and show `text`. */
export interface AnswerReplacement {
  text: string;
  reason: "validation_failed" | "model_failed";
  issues: string[];
}

/** What stays in the snapshot after a turn: control state and a compact summary, not the evidence. */
export interface LastTurn {
  requestId: string;
  turn: number;
  outcome: OutcomeClass;
  reasonCodes: ReasonCode[];
  answer: FinalAnswerPackage;
  coverage: CoverageReport;
  validation: AnswerValidation | null;
  replacement: AnswerReplacement | null;
}

export interface EvidenceContext {
  state: ConversationState;
  turn: TurnWork | null;
  last: LastTurn | null;
}

export type EvidenceEvent =
  | { type: "user.message"; text: string; requestId: string; offline: boolean }
  | {
      type: "interpreted";
      output: InterpreterOutput | null;
      via: "llm" | "deterministic";
      modelIssue?: "invalid_output" | "model_unavailable" | null;
    }
  | { type: "planned"; plan: ExecutionPlan }
  | { type: "executed"; toolRuns: ToolRun[]; truncated: EvidenceBundle["truncated"] }
  | {
      type: "criticized";
      critique: CriticOutput | null;
      status: CoverageReport["critic"]["model"];
      note?: string | null;
    }
  /**
   * The answer step finished. `choice`: the model's structured choice over the claims menu (null:
   * no model — the engine's own choice, the draft, went out); `released`: what reached the client
   * as tokens (the rendered choice: nothing is streamed before it is validated).
   */
  | {
      type: "answered";
      choice?: AnswerChoice | null;
      released?: string;
      /** Legacy (logged before the claims menu): the model's prose in the slot contract, replayed through its check. */
      text?: string | null;
      gateIssues?: string[];
    }
  /**
   * A model step gave nothing usable, its repair retry included. `codes`: each failed attempt's
   * error code (`invalid_output`, `unavailable`, `timeout`, … ; `rule_violation` for an answer
   * that broke the step's rules); `issues`: why, in words; `released`: what of a broken answer
   * stream already reached the client.
   */
  | { type: "model.failed"; role: ModelStep; codes: string[]; issues: string[]; released?: string }
  /** The answer composed from evidence went out as tokens (nothing of the model's had). */
  | { type: "draft.shown" };

export type EvidenceEffect =
  | { type: "effect.interpret"; text: string; state: ConversationState }
  | { type: "effect.interpretByRules"; text: string; state: ConversationState; modelIssue: ModelIssue | null }
  | { type: "effect.plan"; frame: QueryFrame; scope: TurnScope }
  | { type: "effect.planByRules"; scope: TurnScope }
  | { type: "effect.execute"; plan: ExecutionPlan }
  | {
      type: "effect.critic";
      frame: QueryFrame | null;
      scope: TurnScope;
      bundle: EvidenceBundle;
      coverage: CoverageReport;
    }
  | {
      type: "effect.answer";
      frame: QueryFrame | null;
      scope: TurnScope | null;
      bundle: EvidenceBundle;
      coverage: CoverageReport;
      draft: FinalAnswerPackage;
      menu: ClaimsMenu;
      text: string;
      offline: boolean;
    }
  | { type: "effect.showDraft"; text: string }
  | { type: "effect.record"; work: TurnWork; state: ConversationState };

/** Scope for a turn nobody could read: no model, and the deterministic interpreter gave up. */
const unreadable = (modelIssue: "invalid_output" | "model_unavailable" | null = null): TurnScope => ({
  intent: "unsupported",
  gate: "model_required",
  reading: null,
  counterparty: null,
  role: null,
  time: { text: null, premise: "assumed", source: "default" },
  premises: [],
  reasons: [modelIssue === "invalid_output" ? "MODEL_OUTPUT_INVALID" : "MODEL_REQUIRED"],
  clarifying_question: null,
});

const work = (c: EvidenceContext) => c.turn!;

type Interpreted = Extract<EvidenceEvent, { type: "interpreted" }>;

/** The turn once its question was read (by the model or the rules), or found unreadable. */
function readQuestion(context: EvidenceContext, event: Interpreted): TurnWork {
  const w = work(context);
  // Nobody could read the question: the rules' frame (the question verbatim, nothing inferred) is still kept.
  if (!event.output)
    return {
      ...w,
      frame: ruleFrame(
        {
          requestId: w.requestId,
          conversationId: context.state.conversation_id,
          turn: w.turn,
          text: w.text,
          interpretedBy: "deterministic",
        },
        context.state,
      ),
      // A version-1 log names the model's failure on this event; since, the machine recorded it.
      scope: unreadable(event.modelIssue ?? w.modelIssue ?? null),
    };
  const frame = buildFrame(
    event.output,
    {
      requestId: w.requestId,
      conversationId: context.state.conversation_id,
      turn: w.turn,
      text: w.text,
      interpretedBy: event.via,
    },
    context.state,
  );
  return { ...w, frame, scope: resolveScope(frame, context.state) };
}

export interface AnswerOutcome {
  answer: FinalAnswerPackage;
  validation: AnswerValidation | null;
  replacement: AnswerReplacement | null;
  rejected: TurnWork["rejected"];
}

/** How the answer step ended: the model's choice (null: none usable) and what reached the client. */
interface AnswerEnd {
  choice?: AnswerChoice | null;
  released?: string;
  text?: string | null;
  gateIssues?: string[];
}

/** The turn's end: the model's choice rendered by the engine (else the draft), the state advanced. */
function finishTurn(context: EvidenceContext, event: AnswerEnd): Partial<EvidenceContext> {
  const w = work(context);
  const draft = w.draft!;
  const released = event.released ?? "";
  if (!event.choice && typeof event.text === "string")
    return endTurn(context, legacyProse(w, event.text, released, event.gateIssues ?? []));
  // The same pure resolution the answer handler streamed: refused parts are left out with their
  // reason, mandatory claims added; nothing of the model's is shown as a fact.
  const resolved = event.choice ? resolveChoice(w.menu!, AnswerChoice.parse(event.choice)) : null;
  const answer: FinalAnswerPackage = resolved ? packageOf(resolved, draft.clarifying_question, "model") : draft;
  const validation: AnswerValidation | null = resolved
    ? {
        ok: resolved.issues.length === 0,
        issues: resolved.issues,
        citations: [...new Set([...answer.user_facing_answer.matchAll(/\[(F\d+)\]/g)].map((m) => m[1]!))],
      }
    : null;
  // Tokens that are not the answer (a broken-off stream) are replaced; a rendered choice never is.
  const replacement: AnswerReplacement | null =
    released && released !== answer.user_facing_answer
      ? { text: answer.user_facing_answer, reason: "model_failed", issues: [] }
      : null;
  const rejected =
    resolved && resolved.issues.length
      ? { text: JSON.stringify(event.choice), released, issues: resolved.issues }
      : !event.choice && released
        ? { text: released, released, issues: [] }
        : null;
  return endTurn(context, { answer, validation, replacement, rejected });
}

/** The turn's answer, however it was reached; the conversation state advances with it. */
function endTurn(context: EvidenceContext, end: AnswerOutcome): Partial<EvidenceContext> {
  const w = work(context);
  const { answer, validation, replacement } = end;
  const done: TurnWork = { ...w, answer, validation, rejected: end.rejected };
  const state = advanceState(context.state, {
    frame: w.frame,
    scope: w.scope,
    coverage: w.coverage!,
    bundle: w.bundle,
    clarifying_question: w.clarifying,
    text: w.text,
  });
  return {
    state,
    turn: done,
    last: {
      requestId: w.requestId,
      turn: w.turn,
      outcome: w.coverage!.outcome,
      reasonCodes: w.coverage!.reason_codes,
      answer,
      coverage: w.coverage!,
      validation,
      replacement,
    },
  };
}

/** The critic's verdict (or its failure) merged into the rules' report, and the draft composed from it. */
function composeDraft(
  context: EvidenceContext,
  critique: CriticOutput | null,
  status: CoverageReport["critic"]["model"],
  note: string | null,
): TurnWork {
  const w = work(context);
  const coverage = mergeCritique(w.coverage!, critique, status, note, critiqueGround(w.bundle, w.plan, w.toolRuns));
  const { menu, draft } = composeWithMenu({
    scope: w.scope!,
    coverage,
    question: w.text,
    bundle: w.bundle,
    toolRuns: w.toolRuns,
    clarifying_question: w.clarifying,
    offline: w.offline,
    interpretedBy: w.frame?.interpreted_by,
  });
  // What a fault left unchecked is a mandatory claim of the menu (compose.ts): the draft and any
  // model's choice carry it.
  return { ...w, coverage, draft, menu };
}

/**
 * A party the user's words named but only a role they never stated made unique («мы должны
 * Альфе» with Альфа-Снаб and Альфа-Трейд in the directory) is an assumption of this turn's
 * answer, not a confirmed premise (§6.2.3, §11.3): its premise says so, source `tool`.
 */
function bindingPremise(scope: TurnScope, bundle: EvidenceBundle): TurnScope {
  if (!narrowedByInferredRole(bundle, scope).length) return scope;
  const premises = scope.premises.map((p) =>
    p.kind === "entity" && p.key === "counterparty" && p.status !== "assumed"
      ? { ...p, status: "assumed" as const, source: "tool" as const }
      : p,
  );
  return { ...scope, premises };
}

const failedEvent = (event: EvidenceEvent) => (event.type === "model.failed" ? event : null);

export const evidenceMachine = setup({
  types: {} as {
    context: EvidenceContext;
    events: EvidenceEvent;
    emitted: EvidenceEffect;
    input: { conversationId: string };
  },
  guards: {
    proceeds: ({ context }) => context.turn?.scope?.gate === "proceed",
    // A customer's balance has no supplier-register route to plan: the built-in plan says so, no model asked.
    customerBalance: ({ context }) => context.turn?.scope?.gate === "proceed" && context.turn.scope.role === "customer",
    // A connected model that answered, but never in the schema, is a broken model, not a missing one.
    outputInvalid: ({ event }) => failedEvent(event)?.codes.includes("invalid_output") ?? false,
  },
  actions: {
    startTurn: assign({
      turn: ({ context, event }) => {
        const e = event as Extract<EvidenceEvent, { type: "user.message" }>;
        return {
          requestId: e.requestId,
          text: e.text,
          turn: context.state.turn + 1,
          offline: e.offline,
          frame: null,
          scope: null,
          plan: null,
          toolRuns: [],
          bundle: emptyBundle(e.requestId),
          coverage: null,
          clarifying: null,
          draft: null,
          menu: null,
          answer: null,
          validation: null,
          rejected: null,
          modelIssue: null,
        };
      },
    }),
    readQuestion: assign({ turn: ({ context, event }) => readQuestion(context, event as Interpreted) }),
    interpreterInvalid: assign({
      turn: ({ context }) => ({ ...work(context), modelIssue: "invalid_output" as const }),
    }),
    // Unreachable, timed out, refused — or no model configured at all (offline: no failure to name).
    interpreterUnavailable: assign({
      turn: ({ context, event }) => ({
        ...work(context),
        modelIssue: failedEvent(event)?.codes.every((c) => c === "offline") ? null : ("model_unavailable" as const),
      }),
    }),
    storePlan: assign({
      turn: ({ context, event }) => ({
        ...work(context),
        plan: (event as Extract<EvidenceEvent, { type: "planned" }>).plan,
      }),
    }),
    finishTurn: assign(({ context, event }) => {
      if (event.type === "answered") return finishTurn(context, event);
      // The model gave no usable prose: the draft is the answer; what it released, if anything, is replaced.
      if (event.type === "model.failed") return finishTurn(context, { choice: null, released: event.released ?? "" });
      return finishTurn(context, { choice: null });
    }),
    recordTurn: emit(({ context }) => ({ type: "effect.record" as const, work: context.turn!, state: context.state })),
    // The evidence leaves the snapshot with the turn; the run's artifacts are stored in evidence_runs.
    dropTurn: assign({ turn: null }),
  },
}).createMachine({
  id: "evidence-conversation",
  initial: "idle",
  context: ({ input }) => ({ state: emptyConversationState(input.conversationId), turn: null, last: null }),
  states: {
    idle: {
      on: {
        "user.message": { target: "interpreting", actions: "startTurn" },
      },
    },
    interpreting: {
      entry: emit(({ context }) => ({
        type: "effect.interpret" as const,
        text: work(context).text,
        state: context.state,
      })),
      on: {
        interpreted: { target: "gating", actions: "readQuestion" },
        "model.failed": [
          { guard: "outputInvalid", target: "interpretingByRules", actions: "interpreterInvalid" },
          { target: "interpretingByRules", actions: "interpreterUnavailable" },
        ],
      },
    },
    // The rules' interpreter, once the model failed (or there is none); a question it cannot read is unreadable.
    interpretingByRules: {
      entry: emit(({ context }) => ({
        type: "effect.interpretByRules" as const,
        text: work(context).text,
        state: context.state,
        modelIssue: work(context).modelIssue,
      })),
      on: { interpreted: { target: "gating", actions: "readQuestion" } },
    },
    gating: {
      always: [
        { guard: "customerBalance", target: "planningByRules" },
        { guard: "proceeds", target: "planning" },
        { target: "assessing" },
      ],
    },
    planning: {
      entry: emit(({ context }) => ({
        type: "effect.plan" as const,
        frame: work(context).frame!,
        scope: work(context).scope!,
      })),
      on: {
        planned: { target: "executing", actions: "storePlan" },
        "model.failed": { target: "planningByRules" },
      },
    },
    // The built-in plan: for a customer's balance, or once the planner model failed (or there is none).
    planningByRules: {
      entry: emit(({ context }) => ({ type: "effect.planByRules" as const, scope: work(context).scope! })),
      on: { planned: { target: "executing", actions: "storePlan" } },
    },
    executing: {
      entry: emit(({ context }) => ({ type: "effect.execute" as const, plan: work(context).plan! })),
      on: {
        executed: {
          target: "assessing",
          actions: assign({
            turn: ({ context, event }) => {
              const w = work(context);
              const bundle = buildEvidence(w.requestId, w.plan!, event.toolRuns, event.truncated);
              return { ...w, toolRuns: event.toolRuns, bundle, scope: bindingPremise(w.scope!, bundle) };
            },
          }),
        },
      },
    },
    // The rules of the Coverage Critic run on every turn, blocked ones included (§8.6).
    assessing: {
      entry: [
        assign({
          turn: ({ context }) => {
            const w = work(context);
            const r = ruleCoverage({
              requestId: w.requestId,
              frame: w.frame,
              scope: w.scope!,
              plan: w.plan,
              toolRuns: w.toolRuns,
              bundle: w.bundle,
            });
            return { ...w, coverage: r.coverage, clarifying: r.clarifying_question };
          },
        }),
        emit(({ context }) => {
          const w = work(context);
          return {
            type: "effect.critic" as const,
            frame: w.frame,
            scope: w.scope!,
            bundle: w.bundle,
            coverage: w.coverage!,
          };
        }),
      ],
      on: {
        criticized: {
          target: "answering",
          actions: assign({
            turn: ({ context, event }) => composeDraft(context, event.critique, event.status, event.note ?? null),
          }),
        },
        // The rules' report stands alone, and says the critic model failed.
        "model.failed": {
          target: "answering",
          actions: assign({
            turn: ({ context, event }) =>
              composeDraft(
                context,
                null,
                "failed",
                // Codes only: an issue may quote the model's output, which is kept in rejected_model_outputs, never here.
                `критик-модель не дала валидного ответа (${[...new Set(event.codes)].join(", ")})`,
              ),
          }),
        },
      },
    },
    answering: {
      entry: emit(({ context }) => {
        const w = work(context);
        return {
          type: "effect.answer" as const,
          frame: w.frame,
          scope: w.scope,
          bundle: w.bundle,
          coverage: w.coverage!,
          draft: w.draft!,
          menu: w.menu!,
          text: w.text,
          offline: w.offline,
        };
      }),
      on: {
        answered: { target: "idle", actions: ["finishTurn", "recordTurn", "dropTurn"] },
        // Nothing of the model's is streamed before it is resolved, so a failed answer step showed nothing.
        "model.failed": { target: "showingDraft" },
      },
    },
    // The answer model gave nothing and showed nothing: the answer composed from evidence goes out instead.
    showingDraft: {
      entry: emit(({ context }) => ({
        type: "effect.showDraft" as const,
        text: work(context).draft!.user_facing_answer,
      })),
      on: { "draft.shown": { target: "idle", actions: ["finishTurn", "recordTurn", "dropTurn"] } },
    },
  },
});

export const evidenceSpec: MachineSpec<typeof evidenceMachine> = {
  id: "evidence-conversation",
  version: 1,
  machine: evidenceMachine,
};
