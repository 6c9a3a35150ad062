import { errorStatus, type ErrorCode } from "../../driver/errors";
import type { Outcome, RunEvent } from "../../driver/run";
import type { NewMessage } from "../../storage/messages";
import type { WorkbenchEvents } from "./contract";
import type { CallCounter, InteractionContext } from "./interaction.machine";
import { turnReport } from "./interaction-report";

/**
 * What a Workbench turn stores and announces, read from the Interaction's final snapshot only
 * (pure; `turnReport` says what the final state means): the messages, the projection rows
 * (store/interaction-turn.ts writes them in the turn's transaction, beside the snapshot), the
 * closing events and the run's outcome.
 */

type Snap = { value: unknown; context: InteractionContext };

export interface InteractionRows {
  /** A new request: the conversation's active Interaction (another one) is superseded. */
  supersedes: boolean;
  messages: NewMessage[];
  /** The clarification this turn's reply closes; its answer is the turn's first message. */
  closes: { id: string; status: "answered" | "unclear" | "cancelled" } | null;
  /** The question this turn asks; its message is the turn's last. */
  asks: {
    id: string;
    taskId: string;
    slot: string;
    question: string;
    candidates: unknown[];
    planVersion: number;
  } | null;
  interaction: {
    id: string;
    status: string;
    plan: unknown;
    planVersion: number;
    /** A new request: its root is the turn's first message. */
    root: boolean;
    workspaceGeneration: string | null;
    workspaceSnapshotSha256: string | null;
  };
}

export const modelCalls = (c: CallCounter) => ({
  preparatory: c.planner + c.reranker + c.classifier,
  final: c.answer,
  byRole: { ...c },
});

/** The user's message of this turn, by where the turn began: the root of a new request, or the reply as it was read. */
const userMessage: Record<string, (c: InteractionContext) => NewMessage> = {
  request: (c) => ({ role: "user", text: c.rootText, meta: { root: true, interactionId: c.interactionId } }),
  reply: ({ interactionId, reply: r }) => ({
    role: "user",
    text: r!.text,
    meta: {
      interactionId,
      clarificationId: r!.clarificationId,
      replyKind: r!.kind,
      decidedBy: r!.decidedBy,
      candidateId: r!.candidateId,
    },
  }),
};

/** The assistant's message: the question asked, or the answer given (a cancel or a failure stores none). */
function assistantMessage(c: InteractionContext, report: ReturnType<typeof turnReport>): NewMessage[] {
  const q = report.asks;
  const question: NewMessage[] = q
    ? [
        {
          role: "assistant",
          text: q.question,
          meta: {
            interactionId: c.interactionId,
            kind: "clarification",
            clarificationId: q.id,
            taskId: q.taskId,
            slot: q.slot,
            candidates: q.candidates,
          },
        },
      ]
    : [];
  const meta = {
    interactionId: c.interactionId,
    kind: "answer",
    planVersion: c.planVersion,
    targets: c.targets,
    citations: c.turn.citations,
    validationOk: c.validationOk,
  };
  return report.answers ? [{ role: "assistant", text: c.answer!, meta }] : question;
}

export function interactionRows(s: Snap): InteractionRows {
  const c = s.context;
  const report = turnReport(s);
  const user = userMessage[c.turn.origin!]?.(c);
  return {
    supersedes: c.turn.origin === "request",
    messages: [...(user ? [user] : []), ...assistantMessage(c, report)],
    closes: report.closes ? { id: c.reply!.clarificationId, status: report.closes } : null,
    asks: report.asks && { ...report.asks, planVersion: c.planVersion },
    interaction: {
      id: c.interactionId,
      status: report.status,
      plan: c.plan,
      planVersion: c.planVersion,
      root: c.turn.origin === "request",
      workspaceGeneration: c.workspace?.generation ?? null,
      workspaceSnapshotSha256: c.workspace?.snapshotSha256 ?? null,
    },
  };
}

/** Published after the commit: the question, the error of a failed request, or the final answer. */
export function closingEvents(s: Snap): RunEvent<WorkbenchEvents>[] {
  const c = s.context;
  const report = turnReport(s);
  const modelCallsOf = modelCalls(c.turn.calls);
  const q = report.asks;
  if (q) {
    const data = {
      ...q,
      interactionId: c.interactionId,
      reasons: c.turn.reasons,
      planVersion: c.planVersion,
      modelCalls: modelCallsOf,
    };
    return [{ event: "clarification_required", data }];
  }
  if (report.error) return [{ event: "error", data: report.error }];
  const data = {
    interactionId: c.interactionId,
    status: report.status,
    planVersion: c.planVersion,
    answer: report.status === "cancelled" ? "Запрос отменён." : c.answer!,
    entityCitations: c.turn.citations,
    validation: c.turn.validation ?? { ok: true, issues: [] },
    modelCalls: modelCallsOf,
    ...(c.turn.outcome === "plain" ? { reasons: c.turn.reasons } : {}),
  };
  return [{ event: "final", data } as RunEvent<WorkbenchEvents>];
}

/** The run's outcome and reason codes (a failed request commits, but its run is stored failed with its code). */
export function runOutcome(s: Snap): Outcome {
  const r = turnReport(s);
  const code = r.error && ((r.error.code in errorStatus ? r.error.code : "internal") as ErrorCode);
  return { ...(code ? { errorCode: code } : {}), outcome: r.outcome, reasonCodes: r.reasonCodes };
}
