import { stateLabel, statusOf } from "./interaction-setup.machine";
import { MODEL_FAILURE, type InteractionContext } from "./interaction-types";

/**
 * What an Interaction's final snapshot means for its turn (pure, beside the machine whose states
 * it reads): the commit (commit.ts) and the turn (turn.ts) read it, never the state names themselves.
 */

type Snap = { value: unknown; context: InteractionContext };

/**
 * What a turn's final snapshot reports, decided here beside the states it reads: the run's
 * outcome and reason codes, the trace's last word, how the answered question's row closes.
 */
const CLOSES: Partial<Record<string, "cancelled" | "unclear">> = { cancel: "cancelled", unclear: "unclear" };

export function turnReport(s: Snap) {
  const c = s.context;
  const status = statusOf(s);
  const failed = status === "failed" ? (c.error ?? MODEL_FAILURE.request) : null;
  const answered = c.turn.outcome === "plain" ? "plain_answer" : "answered";
  const byStatus: Record<string, { outcome: string; trace: string; reasons: string[] }> = {
    awaiting_clarification: { outcome: "clarification", trace: "clarification_required", reasons: [] },
    completed: { outcome: answered, trace: "not_needed", reasons: [] },
    cancelled: { outcome: "cancelled", trace: "cancelled", reasons: ["cancelled_by_user"] },
    failed: { outcome: "failed", trace: "failed", reasons: [failed?.code ?? ""] },
  };
  const r = byStatus[status] ?? { outcome: status, trace: "not_needed", reasons: [] };
  const invalid = c.turn.validation?.ok === false ? ["validation_failed"] : [];
  const kind = c.turn.origin === "reply" ? c.reply?.kind : null;
  return {
    status,
    outcome: r.outcome,
    trace: r.trace,
    reasonCodes: [...c.turn.reasons, ...invalid, ...r.reasons],
    error: failed,
    /** The row status of the question this turn's reply closed (null: the turn answered none). */
    closes: kind ? (CLOSES[kind] ?? ("answered" as const)) : null,
    asks: status === "awaiting_clarification" ? c.question : null,
    /** A cancel's reply (stage 07 is recorded for it at the close: a cancel prepares nothing). */
    cancelledReply: status === "cancelled" ? c.reply : null,
    /** Why the driver discards this turn (nothing of it is stored), if it does. */
    discarded: DISCARDED[stateLabel(s)] ?? null,
    answers: status === "completed",
  };
}

const DISCARDED: Record<string, "reply_failed" | "released"> = {
  reply_failed: "reply_failed",
  "awaiting_clarification.released": "released",
};

/** Whether the driver must discard this turn: a failed reply, or a reply that was a new request. */
export const discardedTurn = (s: { value: unknown }): boolean => stateLabel(s) in DISCARDED;
