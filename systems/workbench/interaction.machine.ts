import { assign, emit, setup } from "xstate";
import type { MachineSpec } from "../../driver/machine-spec";
import { applyPatch, type PlanUpdate } from "./patch";
import type { Candidate, Plan } from "./types";

/**
 * One logical Workbench request (seed 000): preparing → awaiting_clarification → answering →
 * completed, plus superseded, cancelled and failed. Pure: preparation and the answer call are
 * `effect.*` emits the driver runs; their results come back as events. The plan and its version
 * live here; the root request never changes.
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

export const INTERACTION_MACHINE_VERSION = 1;

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
        failed: { target: "failed", actions: "storeError" },
      },
    },
    awaiting_clarification: {
      on: {
        "reply.answer": { guard: "replyPatchApplies", target: "preparing", actions: "applyReply" },
        "reply.unclear": { guard: "replyIsCurrent", target: "preparing", actions: "closeClarification" },
      },
    },
    answering: {
      on: {
        answered: { target: "completed", actions: "storeAnswer" },
        failed: { target: "failed", actions: "storeError" },
      },
    },
    completed: { type: "final" },
    superseded: { type: "final" },
    cancelled: { type: "final" },
    failed: { type: "final" },
  },
});

export const interactionSpec: MachineSpec<typeof interactionMachine> = {
  id: "interaction",
  version: INTERACTION_MACHINE_VERSION,
  machine: interactionMachine,
};

export const ACTIVE_STATUSES = ["preparing", "awaiting_clarification", "answering"] as const;
