import { assign, emit, setup } from "xstate";
import type { MachineSpec } from "../../driver/machine-spec";
import { applyPatch, type PlanUpdate } from "./patch";
import type { Candidate, Plan } from "./types";

/**
 * One logical Workbench request (seed 000): preparing → awaiting_clarification → answering →
 * completed, plus superseded, cancelled and failed. Pure: preparation and the answer call are
 * `effect.*` emits the driver runs; their results come back as events. The plan and its version
 * live here; the root request never changes.
 *
 * A failed answer model is the `model.failed` event, and the machine decides what it means: a new
 * request ends `failed` (stored: the request is kept, the user may send it again); a turn that
 * applies a clarification answer ends `reply_failed`, which the driver discards — nothing of the
 * turn is stored, the clarification stays open and the same answer can be sent again.
 */

export interface WorkspaceRef {
  generation: string;
  snapshotSha256: string;
}

export interface Target {
  identity: string;
  documentType: string;
  displayName: string;
}

export interface InteractionContext {
  interactionId: string;
  conversationId: string;
  rootText: string;
  plan: Plan | null;
  planVersion: number;
  workspace: WorkspaceRef | null;
  openClarificationId: string | null;
  clarifications: number;
  targets: Target[];
  answer: string | null;
  validationOk: boolean | null;
  error: { code: string; message: string } | null;
  supersededBy: string | null;
  /** Tasks whose results the last patch invalidated (re-derived by the next preparation). */
  invalidated: string[];
  /**
   * The clarification whose reply this turn applies (with its continuation), until the turn
   * rests: it decides where a model failure leads. Null in every stored snapshot.
   */
  replyInTurn: string | null;
}

export interface InteractionInput {
  interactionId: string;
  conversationId: string;
  rootText: string;
}

export type InteractionEvent =
  | { type: "prepare"; workspace: WorkspaceRef }
  | { type: "prepared.answer"; plan: Plan; targets: Target[] }
  | { type: "prepared.clarify"; plan: Plan; clarificationId: string; targets: Target[] }
  | { type: "prepared.plain"; plan: Plan; answer: string; targets: Target[] }
  | { type: "answered"; answer: string; validationOk: boolean }
  /** The answer model failed (its client's error code: unavailable, timeout, invalid_output…). */
  | { type: "model.failed"; role: "answer"; code: string }
  /** Version 1's failure event (the handler chose the message): kept so v1 logs replay. */
  | { type: "failed"; code: string; message: string }
  | {
      type: "reply.answer";
      clarificationId: string;
      basePlanVersion: number;
      updates: PlanUpdate[];
      candidates: Candidate[];
    }
  | { type: "reply.unclear"; clarificationId: string; basePlanVersion: number }
  | { type: "cancel" }
  | { type: "supersede"; by: string };

export type InteractionEmitted =
  | { type: "effect.prepare"; interactionId: string; planVersion: number; rootText: string; plan: Plan | null }
  | { type: "effect.answer"; interactionId: string; planVersion: number };

/** v2: `replyInTurn` in the context, model failures as `model.failed`. */
export const INTERACTION_MACHINE_VERSION = 2;

/** What the user reads when the answer model fails (CONTRACT.md code `model_unavailable`). */
export const MODEL_FAILURE = {
  request: {
    code: "model_unavailable",
    message: "Модель ответа сейчас недоступна. Запрос сохранён — попробуйте отправить его ещё раз.",
  },
  reply: {
    code: "model_unavailable",
    message: "Модель ответа сейчас недоступна. Ответ на уточнение не применён — отправьте его ещё раз.",
  },
} as const;

const openReply = ({ context, event }: { context: InteractionContext; event: InteractionEvent }) =>
  (event.type === "reply.answer" || event.type === "reply.unclear") &&
  event.clarificationId === context.openClarificationId &&
  event.basePlanVersion === context.planVersion;

export const interactionMachine = setup({
  types: {} as {
    context: InteractionContext;
    events: InteractionEvent;
    emitted: InteractionEmitted;
    input: InteractionInput;
  },
  guards: {
    replyPatchApplies: ({ context, event }) => {
      if (!openReply({ context, event }) || event.type !== "reply.answer" || !context.plan) return false;
      return applyPatch(
        context.plan,
        {
          interactionId: context.interactionId,
          basePlanVersion: event.basePlanVersion,
          clarificationId: event.clarificationId,
          updates: event.updates,
        },
        event.candidates,
      ).ok;
    },
    replyIsCurrent: openReply,
    replyInTurn: ({ context }) => context.replyInTurn !== null,
  },
  actions: {
    requestPreparation: emit(({ context }) => ({
      type: "effect.prepare" as const,
      interactionId: context.interactionId,
      planVersion: context.planVersion,
      rootText: context.rootText,
      plan: context.plan,
    })),
    requestAnswer: emit(({ context }) => ({
      type: "effect.answer" as const,
      interactionId: context.interactionId,
      planVersion: context.planVersion,
    })),
    rememberWorkspace: assign({
      workspace: ({ event, context }) => (event.type === "prepare" ? event.workspace : context.workspace),
    }),
    storePrepared: assign(({ event, context }) => {
      if (event.type !== "prepared.answer" && event.type !== "prepared.clarify" && event.type !== "prepared.plain")
        return {};
      return {
        plan: event.plan,
        planVersion: event.plan.planVersion,
        targets: event.targets,
        invalidated: [],
        error: null,
        openClarificationId: context.openClarificationId,
      };
    }),
    openClarification: assign({
      openClarificationId: ({ event, context }) =>
        event.type === "prepared.clarify" ? event.clarificationId : context.openClarificationId,
      clarifications: ({ context }) => context.clarifications + 1,
    }),
    storePlain: assign({
      answer: ({ event, context }) => (event.type === "prepared.plain" ? event.answer : context.answer),
      validationOk: true,
    }),
    storeAnswer: assign(({ event }) =>
      event.type === "answered" ? { answer: event.answer, validationOk: event.validationOk } : {},
    ),
    storeError: assign({
      error: ({ event, context }) =>
        event.type === "failed" ? { code: event.code, message: event.message } : context.error,
    }),
    storeRequestFailure: assign({ error: { ...MODEL_FAILURE.request } }),
    storeReplyFailure: assign({ error: { ...MODEL_FAILURE.reply } }),
    markReplyInTurn: assign({
      replyInTurn: ({ event, context }) =>
        event.type === "reply.answer" || event.type === "reply.unclear" ? event.clarificationId : context.replyInTurn,
    }),
    turnRests: assign({ replyInTurn: null }),
    applyReply: assign(({ context, event }) => {
      if (event.type !== "reply.answer" || !context.plan) return {};
      const r = applyPatch(
        context.plan,
        {
          interactionId: context.interactionId,
          basePlanVersion: event.basePlanVersion,
          clarificationId: event.clarificationId,
          updates: event.updates,
        },
        event.candidates,
      );
      if (!r.ok) return {};
      return { plan: r.plan, planVersion: r.plan.planVersion, openClarificationId: null, invalidated: r.invalidated };
    }),
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
  }),
  on: {
    supersede: { target: ".superseded", actions: "markSuperseded" },
    cancel: { target: ".cancelled", actions: "closeClarification" },
  },
  states: {
    preparing: {
      on: {
        prepare: { actions: ["rememberWorkspace", "requestPreparation"] },
        "prepared.answer": { target: "answering", actions: ["storePrepared", "requestAnswer"] },
        "prepared.clarify": { target: "awaiting_clarification", actions: ["storePrepared", "openClarification"] },
        "prepared.plain": { target: "completed", actions: ["storePrepared", "storePlain"] },
      },
    },
    awaiting_clarification: {
      entry: "turnRests",
      on: {
        "reply.answer": {
          guard: "replyPatchApplies",
          target: "preparing",
          actions: ["applyReply", "markReplyInTurn"],
        },
        "reply.unclear": {
          guard: "replyIsCurrent",
          target: "preparing",
          actions: ["closeClarification", "markReplyInTurn"],
        },
      },
    },
    answering: {
      on: {
        answered: { target: "completed", actions: "storeAnswer" },
        "model.failed": [
          { guard: "replyInTurn", target: "reply_failed", actions: "storeReplyFailure" },
          { target: "failed", actions: "storeRequestFailure" },
        ],
        failed: { target: "failed", actions: "storeError" },
      },
    },
    completed: { type: "final", entry: "turnRests" },
    superseded: { type: "final" },
    cancelled: { type: "final" },
    failed: { type: "final", entry: "turnRests" },
    /**
     * The answer model failed while a clarification answer was being applied: the driver
     * discards the turn (nothing stored, the run ends with `error`); never a stored state.
     */
    reply_failed: { type: "final" },
  },
});

/** v1 → v2: the context gains `replyInTurn` (null between turns, as every v1 snapshot rests). */
export function migrateInteraction(persisted: unknown, fromVersion: number): unknown {
  if (fromVersion !== 1) throw new Error(`interaction: no migration from version ${fromVersion}`);
  const p = persisted as { context: Omit<InteractionContext, "replyInTurn"> };
  return { ...p, context: { ...p.context, replyInTurn: null } };
}

export const interactionSpec: MachineSpec<typeof interactionMachine> = {
  id: "interaction",
  version: INTERACTION_MACHINE_VERSION,
  machine: interactionMachine,
  migrate: migrateInteraction,
  // v1's events (its `failed` included) give v2 the same stored snapshots, with `replyInTurn: null`.
  replaysFrom: 1,
};

export const ACTIVE_STATUSES = ["preparing", "awaiting_clarification", "answering"] as const;
