import type { MachineSpec } from "../../driver/machine-spec";
import { awaitingClarification, clarificationSetup } from "./interaction-clarification.machine";
import { REPLAY_ONLY } from "./interaction-setup.machine";
import { emptyTurn, type InteractionContext } from "./interaction-types";

export * from "./interaction-types";

/**
 * One logical Workbench request (seed 000): preparing → awaiting_clarification → answering →
 * completed, plus superseded, cancelled and failed. Pure: preparation, the reply's
 * classification and the answer call are `effect.*` emits the driver runs; their results come
 * back as events. The plan, its version and the open question live here; the root request never
 * changes. Its setup (the request turn's actions) is interaction-setup.machine.ts; a
 * clarification answer is a child-state walk of `awaiting_clarification`, the region of
 * interaction-clarification.machine.ts with its guards.
 *
 * A failed answer model is the `model.failed` event: a new request ends `failed` (stored: the
 * request is kept); a turn that applies a clarification answer ends `reply_failed`, which the
 * driver discards — nothing of the turn is stored, the question stays open.
 */

/** v3: the clarification as child states, the turn's facts in the context (v2: `replyInTurn`, `model.failed`). */
export const INTERACTION_MACHINE_VERSION = 3;

export const interactionMachine = clarificationSetup.createMachine({
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
    awaiting_clarification: awaitingClarification,
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
