import type { ThreadEvent } from "../storage/thread-events";

/**
 * An operator's action on a conversation (issue 32), as the inbox routes hand it to the system
 * that owns the conversation (driver/system.ts `inbox.operate`): the system's machine takes it as
 * an event and decides whether it is accepted.
 */
export type OperatorAction =
  | { kind: "take"; operator: string }
  | { kind: "message"; operator?: string; text: string; idempotencyKey?: string }
  | { kind: "release"; operator?: string }
  /** Who will answer (issue 43); null unassigns. */
  | { kind: "assign"; operator?: string; assignee: string | null }
  /** The holder's thread to a colleague, with no bot in between (issue 43). */
  | { kind: "transfer"; operator?: string; to: string }
  | { kind: "close"; operator?: string };

export interface OperatorResult {
  /** The thread event written (or, for a repeated request, the one written before). */
  event: ThreadEvent;
  /** The system's conversation state after the action. */
  state: unknown;
  /** Who holds the conversation now; null: the bot answers. */
  human: { operator: string; since: string; replies: number } | null;
  /** A repeated request (the same Idempotency-Key, a second take by the holder): nothing new was written. */
  replayed: boolean;
}
