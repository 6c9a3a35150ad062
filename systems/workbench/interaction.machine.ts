import { assign, emit, setup } from "xstate";
import type { MachineSpec } from "../../driver/machine-spec";
import {
  emptyTurn,
  type CallCounter,
  type InteractionContext,
  type InteractionEmitted,
  type InteractionEvent,
  type InteractionInput,
  type ReplyReceived,
  MAX_PREPARATORY_CALLS,
  MODEL_FAILURE,
  UNCLEAR_PREFIX,
} from "./interaction-types";

export * from "./interaction-types";
export { REPLAY_ONLY, replyRefusal, stateLabel, statusOf } from "./interaction-guards";
import {
  REPLAY_ONLY,
  statusOf,
  stateLabel,
  replyRefusal,
  byCode,
  patched,
  codeFacts,
  classifiedKind,
  addCalls,
  nextWorkspace,
  admissible,
} from "./interaction-guards";

/**
 * One logical Workbench request (seed 000): preparing → awaiting_clarification → answering →
 * completed, plus superseded, cancelled and failed. Pure: preparation, the reply's
 * classification and the answer call are `effect.*` emits the driver runs; their results come
 * back as events. The plan, its version and the open question live here; the root request never
 * changes.
 *
 * A clarification answer is a child-state walk of `awaiting_clarification`: `open` takes
 * `reply.received` only when it answers the open question at the current plan version with an
 * offered candidate (`replyRefusal`, which the route also reads to answer 409/422 before the
 * stream opens); the code cascade (reply.ts) decides a click, an ordinal or a cancel at once,
 * anything else goes through `classifying` (`effect.classifyReply`). A reply that turns out to be
 * a new request rests in `released`, a turn the driver discards: the route starts a new Interaction.
 *
 * A failed answer model is the `model.failed` event: a new request ends `failed` (stored: the
 * request is kept); a turn that applies a clarification answer ends `reply_failed`, which the
 * driver discards — nothing of the turn is stored, the question stays open.
 */

/** v3: the clarification as child states, the turn's facts in the context (v2: `replyInTurn`, `model.failed`). */
export const INTERACTION_MACHINE_VERSION = 3;

export const interactionMachine = setup({
  types: {} as {
    context: InteractionContext;
    events: InteractionEvent;
    emitted: InteractionEmitted;
    input: InteractionInput;
  },
  guards: {
    /** The answer is to the open question, at the current plan version, with an offered candidate (if any). */
    replyAdmissible: ({ context, event }) => admissible(context, event),
    codeCancels: ({ context, event }) => admissible(context, event) && codeFacts(event).kind === "cancel",
    codeAnswers: ({ context, event }) => {
      if (!admissible(context, event)) return false;
      const f = codeFacts(event);
      return f.kind === "answer" && patched(context, f.clarificationId, f.updates, f.candidates) !== null;
    },
    classifiedContinues: ({ context, event }) => ["patch", "unclear"].includes(classifiedKind(context, event) ?? ""),
    classifiedCancel: ({ context, event }) => classifiedKind(context, event) === "cancel",
    classifiedNewRequest: ({ context, event }) => classifiedKind(context, event) === "new_request",
    /** v1/v2 logs: an answer classified before the turn, at the open question and version. */
    legacyPatchApplies: ({ context, event }) =>
      event.type === "reply.answer" &&
      event.clarificationId === context.openClarificationId &&
      event.basePlanVersion === context.planVersion &&
      patched(context, event.clarificationId, event.updates, event.candidates) !== null,
    legacyUnclearIsCurrent: ({ context, event }) =>
      event.type === "reply.unclear" &&
      event.clarificationId === context.openClarificationId &&
      event.basePlanVersion === context.planVersion,
    replyInTurn: ({ context }) => context.replyInTurn !== null,
  },
  actions: {
    announce: emit(({ context }) => ({
      type: "effect.started" as const,
      interactionId: context.interactionId,
      planVersion: context.planVersion,
      continuation: context.turn.origin === "reply",
    })),
    requestPreparation: emit(({ context, event }) => {
      const next = nextWorkspace(context, event);
      const reply = context.reply;
      const answered = reply && reply.kind !== "unclear" && reply.kind !== null;
      return {
        type: "effect.prepare" as const,
        interactionId: context.interactionId,
        planVersion: context.planVersion,
        rootText: context.rootText,
        plan: context.plan,
        workspaceChanged: !!next && !!context.workspace && next.snapshotSha256 !== context.workspace.snapshotSha256,
        previousSnapshotSha256: context.workspace?.snapshotSha256 ?? null,
        preparatoryBudget: Math.max(0, MAX_PREPARATORY_CALLS - context.turn.calls.classifier),
        answered: answered ? { question: reply.question, answer: reply.text } : null,
        reply,
        invalidated: context.invalidated,
      };
    }),
    requestClassification: emit(({ context, event }) => {
      const e = event as ReplyReceived;
      const task = context.plan?.tasks.find((t) => t.id === e.taskId);
      return {
        type: "effect.classifyReply" as const,
        text: e.text,
        question: e.question,
        candidates: e.candidates,
        askModel: e.candidates.length > 0 || (byCode(e) as { hasCommand?: boolean }).hasCommand === true,
        taskId: e.taskId,
        task: task ? { id: task.id, entityType: task.entityType, mentions: task.mentions } : null,
      };
    }),
    requestAnswer: emit(({ context }) => ({
      type: "effect.answer" as const,
      interactionId: context.interactionId,
      planVersion: context.planVersion,
      request: context.request,
    })),
    startRequestTurn: assign(({ event }) => ({
      turn: { ...emptyTurn(), origin: event.type === "prepare" ? (event.origin ?? null) : null },
      reply: null,
      request: null,
    })),
    rememberWorkspace: assign({
      workspace: ({ event, context }) => nextWorkspace(context, event) ?? context.workspace,
    }),
    countCalls: assign({
      turn: ({ context, event }) => ({
        ...context.turn,
        calls: addCalls(context.turn.calls, (event as { calls?: Partial<CallCounter> }).calls),
      }),
    }),
    storePrepared: assign(({ event, context }) => {
      if (event.type !== "prepared.answer" && event.type !== "prepared.clarify" && event.type !== "prepared.plain")
        return {};
      const outcome =
        event.type === "prepared.answer" ? "answer" : event.type === "prepared.clarify" ? "clarify" : "plain";
      return {
        plan: event.plan,
        planVersion: event.plan.planVersion,
        targets: event.targets,
        invalidated: [],
        error: null,
        request: event.type === "prepared.answer" ? (event.request ?? null) : null,
        turn: { ...context.turn, reasons: event.reasons ?? [], outcome: event.reasons ? outcome : null },
      };
    }),
    openClarification: assign(({ event, context }) => {
      if (event.type !== "prepared.clarify") return {};
      // The previous answer could not be tied to the question: say so, then ask again.
      const again = context.reply?.kind === "unclear" && event.question;
      return {
        openClarificationId: event.clarificationId,
        clarifications: context.clarifications + 1,
        question: event.question
          ? {
              ...event.question,
              id: event.clarificationId,
              question: again ? UNCLEAR_PREFIX + event.question.question : event.question.question,
            }
          : null,
      };
    }),
    storePlain: assign({
      answer: ({ event, context }) => (event.type === "prepared.plain" ? event.answer : context.answer),
      validationOk: true,
    }),
    storeAnswer: assign(({ event, context }) =>
      event.type === "answered"
        ? {
            answer: event.answer,
            validationOk: event.validationOk,
            request: null,
            turn: { ...context.turn, validation: event.validation ?? null, citations: event.citations ?? [] },
          }
        : {},
    ),
    storeError: assign({
      error: ({ event, context }) =>
        event.type === "failed" ? { code: event.code, message: event.message } : context.error,
    }),
    storeRequestFailure: assign({ error: { ...MODEL_FAILURE.request }, request: null }),
    storeReplyFailure: assign({ error: { ...MODEL_FAILURE.reply }, request: null }),
    /** A reply is taken: the turn starts, and where a model failure leads is decided by it. */
    takeReply: assign(({ event, context }) =>
      event.type === "reply.received"
        ? {
            reply: codeFacts(event),
            replyInTurn: event.clarificationId,
            turn: { ...emptyTurn(), origin: "reply" as const },
            request: null,
          }
        : {},
    ),
    storeClassified: assign(({ event, context }) => {
      if (event.type !== "reply.classified" || !context.reply) return {};
      const kind = classifiedKind(context, event) === "unclear" ? "unclear" : event.kind;
      return {
        reply: {
          ...context.reply,
          kind,
          decidedBy: event.decidedBy,
          candidateId: event.candidateId,
          updates: event.updates,
          classifierOutput: event.classifierOutput,
        },
      };
    }),
    applyReply: assign(({ context }) => {
      // Only an answer or a correction patches the plan (an unclear reply leaves it as it was).
      const r =
        context.reply &&
        context.reply.kind !== "unclear" &&
        patched(context, context.reply.clarificationId, context.reply.updates, context.reply.candidates);
      return r
        ? { plan: r.plan, planVersion: r.plan.planVersion, openClarificationId: null, invalidated: r.invalidated }
        : {};
    }),
    legacyMarkReply: assign({
      replyInTurn: ({ event, context }) =>
        event.type === "reply.answer" || event.type === "reply.unclear" ? event.clarificationId : context.replyInTurn,
    }),
    legacyApplyReply: assign(({ context, event }) => {
      const r =
        event.type === "reply.answer" && patched(context, event.clarificationId, event.updates, event.candidates);
      return r
        ? { plan: r.plan, planVersion: r.plan.planVersion, openClarificationId: null, invalidated: r.invalidated }
        : {};
    }),
    turnRests: assign({ replyInTurn: null }),
    closeClarification: assign({ openClarificationId: null }),
    markSuperseded: assign({
      supersededBy: ({ event, context }) => (event.type === "supersede" ? event.by : context.supersededBy),
      openClarificationId: null,
    }),
  },
}).createMachine({
  id: "interaction",
  initial: "preparing",
  context: ({ input }) => ({
    interactionId: input.interactionId,
    conversationId: input.conversationId,
    rootText: input.rootText,
    plan: null,
    planVersion: 1,
    workspace: null,
    openClarificationId: null,
    clarifications: 0,
    targets: [],
    answer: null,
    validationOk: null,
    error: null,
    supersededBy: null,
    invalidated: [],
    replyInTurn: null,
    question: null,
    reply: null,
    request: null,
    turn: emptyTurn(),
  }),
  on: {
    supersede: { target: ".superseded", actions: "markSuperseded" },
    // v1/v2 sent a cancel as its own event (v3: `reply.received`, a cancel command): replayed, never sent now.
    cancel: { target: ".cancelled", actions: "closeClarification", meta: REPLAY_ONLY },
  },
  states: {
    preparing: {
      on: {
        prepare: { actions: ["startRequestTurn", "announce", "requestPreparation", "rememberWorkspace"] },
        "prepared.answer": { target: "answering", actions: ["countCalls", "storePrepared", "requestAnswer"] },
        "prepared.clarify": {
          target: "awaiting_clarification",
          actions: ["countCalls", "storePrepared", "openClarification"],
        },
        "prepared.plain": { target: "completed", actions: ["countCalls", "storePrepared", "storePlain"] },
      },
    },
    awaiting_clarification: {
      initial: "open",
      entry: "turnRests",
      states: {
        open: {
          on: {
            "reply.received": [
              {
                guard: "codeCancels",
                target: "#interaction.cancelled",
                actions: ["takeReply", "announce", "closeClarification"],
              },
              {
                guard: "codeAnswers",
                target: "#interaction.preparing",
                actions: ["takeReply", "applyReply", "announce", "requestPreparation", "rememberWorkspace"],
              },
              { guard: "replyAdmissible", target: "classifying", actions: ["takeReply", "requestClassification"] },
            ],
            "reply.answer": {
              guard: "legacyPatchApplies",
              target: "#interaction.preparing",
              actions: ["legacyApplyReply", "legacyMarkReply"],
              meta: REPLAY_ONLY,
            },
            "reply.unclear": {
              guard: "legacyUnclearIsCurrent",
              target: "#interaction.preparing",
              actions: ["closeClarification", "legacyMarkReply"],
              meta: REPLAY_ONLY,
            },
          },
        },
        /** The reply is free text: `effect.classifyReply` (the classifier model only when code cannot tell). */
        classifying: {
          on: {
            "reply.classified": [
              {
                // A patch that applies, or an unclear reply: the question closes and preparation runs again.
                guard: "classifiedContinues",
                target: "#interaction.preparing",
                actions: [
                  "countCalls",
                  "storeClassified",
                  "applyReply",
                  "closeClarification",
                  "announce",
                  "requestPreparation",
                  "rememberWorkspace",
                ],
              },
              {
                guard: "classifiedCancel",
                target: "#interaction.cancelled",
                actions: ["countCalls", "storeClassified", "announce", "closeClarification"],
              },
              { guard: "classifiedNewRequest", target: "released", actions: ["countCalls", "storeClassified"] },
            ],
          },
        },
        /**
         * The reply was a request of its own: this turn is discarded (nothing stored, the
         * question stays open) and the route starts a new Interaction, which supersedes this one.
         */
        released: { type: "final" },
      },
    },
    answering: {
      on: {
        answered: { target: "completed", actions: ["countCalls", "storeAnswer"] },
        "model.failed": [
          { guard: "replyInTurn", target: "reply_failed", actions: ["countCalls", "storeReplyFailure"] },
          { target: "failed", actions: ["countCalls", "storeRequestFailure"] },
        ],
        failed: { target: "failed", actions: "storeError", meta: REPLAY_ONLY },
      },
    },
    completed: { type: "final", entry: "turnRests" },
    superseded: { type: "final" },
    cancelled: { type: "final", entry: "turnRests" },
    failed: { type: "final", entry: "turnRests" },
    /**
     * The answer model failed while a clarification answer was being applied: the driver
     * discards the turn (nothing stored, the run ends with `error`); never a stored state.
     */
    reply_failed: { type: "final" },
  },
});

/**
 * v1/v2 → v3: the context gains `replyInTurn` (v1), `question`, `reply`, `request` and `turn`
 * (absent: null, the empty turn) and `awaiting_clarification` its child `open` (every stored
 * snapshot rests, so a waiting one waits in `open`). Fields already there are kept.
 */
export function migrateInteraction(persisted: unknown, fromVersion: number): unknown {
  if (fromVersion !== 1 && fromVersion !== 2) throw new Error(`interaction: no migration from version ${fromVersion}`);
  const p = persisted as { value: unknown; context: Partial<InteractionContext> };
  const defaults = { replyInTurn: null, question: null, reply: null, request: null, turn: emptyTurn() };
  const value = p.value === "awaiting_clarification" ? { awaiting_clarification: "open" } : p.value;
  return { ...p, value, context: { ...defaults, ...p.context } };
}

export const interactionSpec: MachineSpec<typeof interactionMachine> = {
  id: "interaction",
  version: INTERACTION_MACHINE_VERSION,
  machine: interactionMachine,
  migrate: migrateInteraction,
  // v1's and v2's events (`failed`, `reply.answer`, `reply.unclear`) give v3 the same stored snapshots, migrated.
  replaysFrom: 1,
};

export const ACTIVE_STATUSES = ["preparing", "awaiting_clarification", "answering"] as const;
