import { emit, setup } from "xstate";
import { assign } from "../../driver/assign";
import type { EvidenceContext, EvidenceEffect, EvidenceEvent } from "./conversation-types";
import {
  assess,
  composeDraft,
  finishTurn,
  newTurn,
  readQuestion,
  takeEvidence,
  work,
} from "./conversation-work.machine";

/**
 * The evidence conversation machine's setup(): its guards, the context updates of each step
 * (conversation-work.machine.ts computes them) and the effects its states ask for. The
 * statechart itself is conversation.machine.ts.
 */

const failedEvent = (event: EvidenceEvent) => (event.type === "model.failed" ? event : null);

export const evidenceSetup = setup({
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
      turn: ({ context, event }) => newTurn(context, event as Extract<EvidenceEvent, { type: "user.message" }>),
    }),
    readQuestion: assign({
      turn: ({ context, event }) => readQuestion(context, event as Extract<EvidenceEvent, { type: "interpreted" }>),
    }),
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
    storeEvidence: assign({
      turn: ({ context, event }) => takeEvidence(context, event as Extract<EvidenceEvent, { type: "executed" }>),
    }),
    assess: assign({ turn: ({ context }) => assess(context) }),
    composeDraft: assign({
      turn: ({ context, event }) => {
        const e = event as Extract<EvidenceEvent, { type: "criticized" }>;
        return composeDraft(context, e.critique, e.status, e.note ?? null);
      },
    }),
    // The rules' report stands alone, and says the critic model failed.
    composeDraftUncriticized: assign({
      turn: ({ context, event }) =>
        composeDraft(
          context,
          null,
          "failed",
          // Codes only: an issue may quote the model's output, which is kept in rejected_model_outputs, never here.
          `критик-модель не дала валидного ответа (${[...new Set(failedEvent(event)?.codes)].join(", ")})`,
        ),
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

    // The effects each state asks the driver for: model steps, tools, the draft shown.
    requestInterpretation: emit(({ context }) => ({
      type: "effect.interpret" as const,
      text: work(context).text,
      state: context.state,
    })),
    requestRuleInterpretation: emit(({ context }) => ({
      type: "effect.interpretByRules" as const,
      text: work(context).text,
      state: context.state,
      modelIssue: work(context).modelIssue,
    })),
    requestPlan: emit(({ context }) => ({
      type: "effect.plan" as const,
      frame: work(context).frame!,
      scope: work(context).scope!,
    })),
    requestRulePlan: emit(({ context }) => ({ type: "effect.planByRules" as const, scope: work(context).scope! })),
    requestExecution: emit(({ context }) => ({ type: "effect.execute" as const, plan: work(context).plan! })),
    requestCritic: emit(({ context }) => {
      const w = work(context);
      return {
        type: "effect.critic" as const,
        frame: w.frame,
        scope: w.scope!,
        bundle: w.bundle,
        coverage: w.coverage!,
      };
    }),
    requestAnswer: emit(({ context }) => {
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
    showDraft: emit(({ context }) => ({
      type: "effect.showDraft" as const,
      text: work(context).draft!.user_facing_answer,
    })),
  },
});
