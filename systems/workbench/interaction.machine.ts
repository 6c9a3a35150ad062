import { assign, emit, setup } from "xstate";
import type { MachineSpec } from "../../driver/machine-spec";
import { applyPatch, type PlanUpdate } from "./patch";
import { classifyReplyByCode } from "./reply";
import {
  emptyTurn,
  type CallCounter,
  type InteractionContext,
  type InteractionEmitted,
  type InteractionEvent,
  type InteractionInput,
  type ReplyFacts,
  type ReplyReceived,
  type ReplyRefusal,
  MAX_PREPARATORY_CALLS,
  MODEL_FAILURE,
  UNCLEAR_PREFIX,
} from "./interaction-types";

export * from "./interaction-types";

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

type Snap = { value: unknown; context: InteractionContext };

/**
 * A transition only older logs take (their events are never sent now): replay needs it, the
 * eval's coverage of live traffic leaves it out (the machine tests walk it all the same).
 */
export const REPLAY_ONLY = { replayOnly: true } as const;

/** The top-level state: the projection's `status`, the run's outcome. */
export const statusOf = (s: { value?: unknown }): string =>
  typeof s.value === "object" && s.value !== null ? Object.keys(s.value)[0]! : String(s.value);

/** The state with its child (`awaiting_clarification.open`), for captions. */
export const stateLabel = (s: { value?: unknown }): string =>
  typeof s.value === "object" && s.value !== null
    ? Object.entries(s.value)
        .map(([k, v]) => `${k}.${String(v)}`)
        .join(", ")
    : String(s.value);

/**
 * Whether a clarification answer applies to this snapshot, and if not why: a candidate outside
 * the question's list (422), a question already closed or belonging to another turn of the
 * Interaction, an Interaction no longer waiting, a plan version that moved on (409).
 */
export function replyRefusal(s: Snap, e: ReplyReceived): ReplyRefusal | null {
  const c = s.context;
  if (e.selectedCandidateId !== null && !e.candidates.some((x) => x.candidateId === e.selectedCandidateId))
    return {
      code: "unknown_candidate",
      message: "Можно выбрать только один из предложенных вариантов.",
      details: { selectedCandidateId: e.selectedCandidateId, allowed: e.candidates.map((x) => x.candidateId) },
    };
  if (e.clarificationId !== c.openClarificationId)
    return {
      code: "conflict",
      message: "На это уточнение уже ответили (или оно закрыто).",
      details: { clarificationId: e.clarificationId, status: statusOf(s) },
    };
  if (JSON.stringify(s.value) !== JSON.stringify({ awaiting_clarification: "open" }))
    return { code: "conflict", message: "Запрос уже не ждёт уточнения.", details: { status: statusOf(s) } };
  if (e.basePlanVersion !== c.planVersion)
    return {
      code: "conflict",
      message: "План запроса уже изменился; обновите состояние.",
      details: { basePlanVersion: e.basePlanVersion, planVersion: c.planVersion },
    };
  return null;
}

const byCode = (e: ReplyReceived) => classifyReplyByCode(e.text, e.candidates, e.selectedCandidateId ?? undefined);

/** The scoped patch a reply asks for, applied to the context's plan (null: it does not apply). */
function patched(
  c: InteractionContext,
  clarificationId: string,
  updates: PlanUpdate[],
  candidates: ReplyFacts["candidates"],
) {
  if (!c.plan || updates.length === 0) return null;
  const r = applyPatch(
    c.plan,
    { interactionId: c.interactionId, basePlanVersion: c.planVersion, clarificationId, updates },
    candidates,
  );
  return r.ok ? r : null;
}

/** The reply of this turn as `reply.received` brought it, before classification. */
const receivedFacts = (e: ReplyReceived): ReplyFacts => ({
  clarificationId: e.clarificationId,
  taskId: e.taskId,
  question: e.question,
  text: e.text,
  selectedCandidateId: e.selectedCandidateId,
  candidates: e.candidates,
  basePlanVersion: e.basePlanVersion,
  workspace: e.workspace,
  kind: null,
  decidedBy: null,
  candidateId: null,
  updates: [],
  classifierOutput: undefined,
});

/** A code decision as the classified reply it stands for. */
function codeFacts(e: ReplyReceived): ReplyFacts {
  const d = byCode(e);
  const facts = receivedFacts(e);
  if (d.kind === "cancel") return { ...facts, kind: "cancel", decidedBy: "command" };
  if (d.kind !== "answer") return facts;
  const updates: PlanUpdate[] = [{ taskId: e.taskId, field: "resolvedEntity", candidateId: d.candidateId }];
  return { ...facts, kind: "answer", decidedBy: d.by, candidateId: d.candidateId, updates };
}

/** What a classified reply amounts to: an answer that patches the plan, or the other kinds as they are. */
function classifiedKind(c: InteractionContext, e: InteractionEvent) {
  if (e.type !== "reply.classified" || !c.reply) return null;
  if (e.kind === "cancel" || e.kind === "new_request") return e.kind;
  if (e.kind === "unclear") return "unclear";
  return patched(c, c.reply.clarificationId, e.updates, c.reply.candidates) ? "patch" : "unclear";
}

const addCalls = (c: CallCounter, more: Partial<CallCounter> | undefined): CallCounter => ({
  planner: c.planner + (more?.planner ?? 0),
  reranker: c.reranker + (more?.reranker ?? 0),
  classifier: c.classifier + (more?.classifier ?? 0),
  answer: c.answer + (more?.answer ?? 0),
});

/** The workspace this turn prepares over: the request's, or the reply's (null: the event brings none). */
const nextWorkspace = (c: InteractionContext, e: InteractionEvent) =>
  e.type === "prepare"
    ? e.workspace
    : e.type === "reply.classified" || e.type === "reply.received"
      ? (c.reply?.workspace ?? null)
      : null;

/** A reply the open question takes (the guards below add what the code cascade made of it). */
const admissible = (context: InteractionContext, event: InteractionEvent): event is ReplyReceived =>
  event.type === "reply.received" &&
  replyRefusal({ value: { awaiting_clarification: "open" }, context }, event) === null;

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
