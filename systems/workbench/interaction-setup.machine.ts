import { emit, setup } from "xstate";
import { assign } from "../../driver/assign";
import {
  emptyTurn,
  type CallCounter,
  type InteractionContext,
  type InteractionEmitted,
  type InteractionEvent,
  type InteractionInput,
  MAX_PREPARATORY_CALLS,
  MODEL_FAILURE,
  UNCLEAR_PREFIX,
} from "./interaction-types";

/**
 * The Interaction machine's setup() for a request's own turn: preparation, the answer call, what
 * their results store, the question it opens. The clarification region
 * (interaction-clarification.machine.ts) extends it with the guards and actions of a reply, and
 * interaction.machine.ts builds the statechart from that extension.
 */

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

export const interactionSetup = setup({
  types: {} as {
    context: InteractionContext;
    events: InteractionEvent;
    emitted: InteractionEmitted;
    input: InteractionInput;
  },
  guards: {
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
    turnRests: assign({ replyInTurn: null }),
    closeClarification: assign({ openClarificationId: null }),
    markSuperseded: assign({
      supersededBy: ({ event, context }) => (event.type === "supersede" ? event.by : context.supersededBy),
      openClarificationId: null,
    }),
  },
});
