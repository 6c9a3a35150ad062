import type { SnapshotRow } from "../../storage/snapshots";
import type { ClarificationEvent } from "./clarification.machine";
import type { InteractionEvent } from "./interaction.machine";
import type { WorkspaceSnapshot } from "./types";

/**
 * What a Workbench turn (turn.ts) and the reply it may carry (turn-reply.ts) both speak of:
 * kept apart from either, so neither file imports the other.
 */

export interface Workspace {
  parsed: WorkspaceSnapshot;
  sha: string;
}

export interface CallCounter {
  planner: number;
  reranker: number;
  classifier: number;
  answer: number;
}

export const newCounter = (): CallCounter => ({ planner: 0, reranker: 0, classifier: 0, answer: 0 });
export const modelCalls = (c: CallCounter) => ({
  preparatory: c.planner + c.reranker + c.classifier,
  final: c.answer,
  byRole: { ...c },
});

/**
 * An answer (or an unclear reply) to apply together with its continuation, in the
 * continuation's transaction (issue 18 item 3): nothing of it is stored before. The
 * clarification is claimed meanwhile (`claimToken`), so a concurrent answer gets 409.
 */
export interface PendingReply {
  claimToken: string;
  clarificationId: string;
  /** The Interaction's snapshot row as the reply was checked against; the commit's version check guards it. */
  stored: SnapshotRow;
  event: InteractionEvent;
  userMessage: { text: string; meta: Record<string, unknown> };
  closeStatus: "answered" | "unclear";
  clarificationEvent: (messageId: string) => ClarificationEvent;
  /** The question and this answer, for the continuation's model request (not stored yet). */
  answered: { question: string; answer: string } | null;
}
