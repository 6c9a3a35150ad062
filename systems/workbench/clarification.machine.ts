import { assign, setup } from "xstate";
import type { MachineSpec } from "../../driver/machine-spec";
import type { Candidate } from "./types";

/**
 * One open question of an Interaction (seed 000): it addresses one slot of one task and holds
 * the closed candidate list an answer may pick from. open → answered | unclear | cancelled |
 * superseded. Pure; persisted as a snapshot beside its `clarifications` row.
 */

export interface ClarificationContext {
  id: string;
  interactionId: string;
  taskId: string;
  slot: string;
  question: string;
  candidates: Candidate[];
  planVersion: number;
  answerMessageId: string | null;
  selectedCandidateId: string | null;
  replyKind: string | null;
}

export type ClarificationInput = Omit<ClarificationContext, "answerMessageId" | "selectedCandidateId" | "replyKind">;

export type ClarificationEvent =
  | { type: "answer"; messageId: string; candidateId: string | null; kind: "answer" | "correction" }
  | { type: "unclear"; messageId: string }
  | { type: "cancel"; messageId: string | null }
  | { type: "supersede" };

export const CLARIFICATION_MACHINE_VERSION = 1;

export const clarificationMachine = setup({
  types: {} as { context: ClarificationContext; events: ClarificationEvent; input: ClarificationInput },
  guards: {
    // Only a candidate from the persisted snapshot, or no candidate (a free-text correction).
    candidateInSnapshot: ({ context, event }) =>
      event.type === "answer" &&
      (event.candidateId === null || context.candidates.some((c) => c.candidateId === event.candidateId)),
  },
  actions: {
    recordAnswer: assign(({ event }) =>
      event.type === "answer"
        ? { answerMessageId: event.messageId, selectedCandidateId: event.candidateId, replyKind: event.kind }
        : {},
    ),
    recordUnclear: assign(({ event }) =>
      event.type === "unclear" ? { answerMessageId: event.messageId, replyKind: "unclear" } : {},
    ),
    recordCancel: assign(({ event }) =>
      event.type === "cancel" ? { answerMessageId: event.messageId, replyKind: "cancel" } : {},
    ),
  },
}).createMachine({
  id: "clarification",
  initial: "open",
  context: ({ input }) => ({ ...input, answerMessageId: null, selectedCandidateId: null, replyKind: null }),
  states: {
    open: {
      on: {
        answer: { guard: "candidateInSnapshot", target: "answered", actions: "recordAnswer" },
        unclear: { target: "unclear", actions: "recordUnclear" },
        cancel: { target: "cancelled", actions: "recordCancel" },
        supersede: { target: "superseded" },
      },
    },
    answered: { type: "final" },
    unclear: { type: "final" },
    cancelled: { type: "final" },
    superseded: { type: "final" },
  },
});

export const clarificationSpec: MachineSpec<typeof clarificationMachine> = {
  id: "clarification",
  version: CLARIFICATION_MACHINE_VERSION,
  machine: clarificationMachine,
};
