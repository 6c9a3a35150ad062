import { errorStatus, type ErrorCode } from "../../driver/errors";
import type { Outcome, RunEvent } from "../../driver/run";
import type { NewMessage } from "../../storage/messages";
import type { WorkbenchEvents } from "./contract";
import { statusOf, type CallCounter, type InteractionContext } from "./interaction.machine";

/**
 * What a Workbench turn stores and announces, read from the Interaction's final snapshot only
 * (pure): the messages, the projection rows (store/interaction-turn.ts writes them in the turn's
 * transaction, beside the snapshot), the closing events and the run's outcome.
 */

type Snap = { value: unknown; context: InteractionContext };

export interface InteractionRows {
  /** A new request: the conversation's active Interaction (another one) is superseded. */
  supersedes: boolean;
  messages: NewMessage[];
  /** The clarification this turn's reply closes, with the user message (index in `messages`) that did. */
  closes: { id: string; status: "answered" | "unclear" | "cancelled"; messageIndex: number } | null;
  /** The question this turn asks, with its message's index. */
  asks: {
    row: { id: string; taskId: string; slot: string; question: string; candidates: unknown[]; planVersion: number };
    messageIndex: number;
  } | null;
  interaction: {
    id: string;
    status: string;
    plan: unknown;
    planVersion: number;
    /** Index of the root message in `messages` (a new request), else null. */
    rootIndex: number | null;
    workspaceGeneration: string | null;
    workspaceSnapshotSha256: string | null;
  };
}

export const modelCalls = (c: CallCounter) => ({
  preparatory: c.planner + c.reranker + c.classifier,
  final: c.answer,
  byRole: { ...c },
});

const closeStatus = { cancel: "cancelled", unclear: "unclear" } as const;

/** The user's message of this turn: the root of a new request, or the reply with how it was read. */
function userMessage(c: InteractionContext): NewMessage | null {
  if (c.turn.origin === "request")
    return { role: "user", text: c.rootText, meta: { root: true, interactionId: c.interactionId } };
  const r = c.reply;
  if (c.turn.origin !== "reply" || !r) return null;
  const meta = {
    interactionId: c.interactionId,
    clarificationId: r.clarificationId,
    replyKind: r.kind,
    decidedBy: r.decidedBy,
    candidateId: r.candidateId,
  };
  return { role: "user", text: r.text, meta };
}

/** The assistant's message: the question asked, or the answer given (a cancel says nothing stored). */
function assistantMessage(s: Snap): NewMessage | null {
  const c = s.context;
  const status = statusOf(s);
  if (status === "awaiting_clarification" && c.question) {
    const q = c.question;
    const meta = {
      interactionId: c.interactionId,
      kind: "clarification",
      clarificationId: q.id,
      taskId: q.taskId,
      slot: q.slot,
      candidates: q.candidates,
    };
    return { role: "assistant", text: q.question, meta };
  }
  if (status !== "completed") return null;
  const meta = {
    interactionId: c.interactionId,
    kind: "answer",
    planVersion: c.planVersion,
    targets: c.targets,
    citations: c.turn.citations,
    validationOk: c.validationOk,
  };
  return { role: "assistant", text: c.answer ?? "", meta };
}

export function interactionRows(s: Snap): InteractionRows {
  const c = s.context;
  const status = statusOf(s);
  const user = userMessage(c);
  const assistant = assistantMessage(s);
  const messages = [user, assistant].filter((m): m is NewMessage => m !== null);
  const reply = c.turn.origin === "reply" ? c.reply : null;
  const kind = reply?.kind;
  const asking = status === "awaiting_clarification" && c.question !== null;
  return {
    supersedes: c.turn.origin === "request",
    messages,
    closes: reply
      ? { id: reply.clarificationId, status: closeStatus[kind as "cancel" | "unclear"] ?? "answered", messageIndex: 0 }
      : null,
    asks: asking
      ? {
          row: { ...c.question!, planVersion: c.planVersion },
          messageIndex: messages.length - 1,
        }
      : null,
    interaction: {
      id: c.interactionId,
      status,
      plan: c.plan,
      planVersion: c.planVersion,
      rootIndex: c.turn.origin === "request" ? 0 : null,
      workspaceGeneration: c.workspace?.generation ?? null,
      workspaceSnapshotSha256: c.workspace?.snapshotSha256 ?? null,
    },
  };
}

/** Published after the commit: the question, the error of a failed request, or the final answer. */
export function closingEvents(s: Snap): RunEvent<WorkbenchEvents>[] {
  const c = s.context;
  const status = statusOf(s);
  const calls = modelCalls(c.turn.calls);
  if (status === "awaiting_clarification" && c.question) {
    const q = c.question;
    const data = {
      ...q,
      interactionId: c.interactionId,
      reasons: c.turn.reasons,
      planVersion: c.planVersion,
      modelCalls: calls,
    };
    return [{ event: "clarification_required", data } as RunEvent<WorkbenchEvents>];
  }
  if (status === "failed")
    return [
      {
        event: "error",
        data: { code: c.error?.code ?? "internal", message: c.error?.message ?? "Запрос не выполнен." },
      },
    ];
  const cancelled = status === "cancelled";
  const data = {
    interactionId: c.interactionId,
    status,
    planVersion: c.planVersion,
    answer: cancelled ? "Запрос отменён." : (c.answer ?? ""),
    entityCitations: c.turn.citations,
    validation: c.turn.validation ?? { ok: true, issues: [] },
    modelCalls: calls,
    ...(c.turn.outcome === "plain" ? { reasons: c.turn.reasons } : {}),
  };
  return [{ event: "final", data } as RunEvent<WorkbenchEvents>];
}

const outcomeName: Record<string, string> = { awaiting_clarification: "clarification", cancelled: "cancelled" };

/** The run's outcome and reason codes (a failed request commits, but its run is stored failed with its code). */
export function runOutcome(s: Snap): Outcome {
  const c = s.context;
  const status = statusOf(s);
  const failed = status === "failed" ? (c.error?.code ?? "internal") : null;
  const cancelled = status === "cancelled" ? ["cancelled_by_user"] : [];
  const invalid = c.turn.validation && !c.turn.validation.ok ? ["validation_failed"] : [];
  const completed = c.turn.outcome === "plain" ? "plain_answer" : "answered";
  return {
    ...(failed ? { errorCode: (failed in errorStatus ? failed : "internal") as ErrorCode } : {}),
    outcome: outcomeName[status] ?? (status === "completed" ? completed : status),
    reasonCodes: [...c.turn.reasons, ...cancelled, ...invalid, ...(failed ? [failed] : [])],
  };
}

/** The trace's last word on the run. */
export const traceOutcome = (s: Snap): string =>
  ({ awaiting_clarification: "clarification_required", failed: "failed", cancelled: "cancelled" })[statusOf(s)] ??
  "not_needed";
