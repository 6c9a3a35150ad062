import { emit } from "xstate";
import { assign } from "../../driver/assign";
import { applyPatch, type PlanUpdate } from "./patch";
import { classifyReplyByCode } from "./reply";
import { interactionSetup, REPLAY_ONLY, statusOf } from "./interaction-setup.machine";
import {
  emptyTurn,
  type InteractionContext,
  type InteractionEvent,
  type ReplyFacts,
  type ReplyReceived,
  type ReplyRefusal,
} from "./interaction-types";

/**
 * The clarification region of the Interaction machine: `awaiting_clarification` and its child
 * states, with the guards and actions of a reply. `open` takes `reply.received` only when it
 * answers the open question at the current plan version with an offered candidate
 * (`replyRefusal`, which the route also reads to answer 409/422 before the stream opens); the code
 * cascade (reply.ts) decides a click, an ordinal or a cancel at once, anything else goes through
 * `classifying` (`effect.classifyReply`). A reply that turns out to be a new request rests in
 * `released`, a turn the driver discards: the route starts a new Interaction.
 */

type Snap = { value: unknown; context: InteractionContext };

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

/** A reply the open question takes (the guards below add what the code cascade made of it). */
const admissible = (context: InteractionContext, event: InteractionEvent): event is ReplyReceived =>
  event.type === "reply.received" &&
  replyRefusal({ value: { awaiting_clarification: "open" }, context }, event) === null;

/** The Interaction's setup with a reply's guards and actions: what interaction.machine.ts builds on. */
export const clarificationSetup = interactionSetup.extend({
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
  },
  actions: {
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
    /** A reply is taken: the turn starts, and where a model failure leads is decided by it. */
    takeReply: assign(({ event }) =>
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
  },
});

/** `awaiting_clarification`: the open question, a free-text reply being classified, a reply released. */
export const awaitingClarification = clarificationSetup.createStateConfig({
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
});
