import { AppError } from "../../driver/errors";
import { restoreRow } from "../../driver/turn";
import type { Tx } from "../../storage/db";
import { loadSnapshot } from "../../storage/snapshots";
import { replyRefusal } from "./interaction-clarification.machine";
import { interactionSpec, type ReplyReceived, type WorkspaceRef } from "./interaction.machine";
import { getClarification, getInteraction, openClarificationOf, type InteractionRow } from "./store/interactions";
import { interactionKey } from "./stored-machines";
import type { MessageTurn } from "./turn";
import type { Candidate } from "./types";

/**
 * The route's parse of a Workbench message into the one event its turn sends: a new request, or
 * `reply.received` for the question it answers — found by the clarification's id, or as the open
 * question of the Interaction named. Whether the answer applies is the machine's call
 * (`replyRefusal`, the guard of `awaiting_clarification.open`), asked here before the stream
 * opens so a stale, repeated or foreign answer is a plain 409 and a forged candidate a 422.
 */
export interface MessageBody {
  text: string;
  interactionId?: string;
  replyToClarificationId?: string;
  selectedCandidateId?: string;
  basePlanVersion?: number;
}

const notHere = (what: string) => new AppError("not_found", what);

/** The Interaction and clarification the message names; null: it names none (a new request). */
async function named(sql: Tx, conversationId: string, body: MessageBody) {
  if (body.replyToClarificationId) {
    const clar = await getClarification(sql, body.replyToClarificationId);
    const it = clar && (await getInteraction(sql, clar.interactionId));
    if (!clar || it?.conversationId !== conversationId) throw notHere("Такого уточнения в этом диалоге нет.");
    if (body.interactionId && body.interactionId !== it.id)
      throw new AppError("invalid_request", "Уточнение относится к другому запросу (interactionId).");
    return { it, clar };
  }
  if (!body.interactionId) return null;
  const it = await getInteraction(sql, body.interactionId);
  if (it?.conversationId !== conversationId) throw notHere("Такого запроса (interactionId) в этом диалоге нет.");
  return { it, clar: it.status === "awaiting_clarification" ? await openClarificationOf(sql, it.id) : null };
}

export async function messageTurn(
  sql: Tx,
  conversationId: string,
  body: MessageBody,
  workspace: WorkspaceRef,
): Promise<MessageTurn> {
  const n = await named(sql, conversationId, body);
  if (!n) return { kind: "request", text: body.text, stage: {} };
  if (!n.clar) {
    // A finished Interaction has nothing to answer: the message is a new request.
    if (body.selectedCandidateId)
      throw new AppError("unknown_candidate", "У этого запроса нет открытого уточнения с вариантами.");
    const stage = { reply: { kind: "new_request", decidedBy: "no_open_clarification", interactionId: n.it.id } };
    return { kind: "request", text: body.text, stage };
  }
  const { clar } = n;
  const event: ReplyReceived = {
    type: "reply.received",
    clarificationId: clar.id,
    taskId: clar.taskId,
    question: clar.question,
    basePlanVersion: body.basePlanVersion ?? clar.planVersion,
    text: body.text,
    selectedCandidateId: body.selectedCandidateId ?? null,
    candidates: clar.candidates as Candidate[],
    workspace,
  };
  return replyTurn(sql, n.it, event);
}

async function replyTurn(sql: Tx, it: InteractionRow, event: ReplyReceived): Promise<MessageTurn> {
  const key = interactionKey(it.id);
  const stored = await loadSnapshot(sql, key);
  // No snapshot (the row outlived it): nothing the answer could apply to.
  const refusal = stored
    ? replyRefusal(restoreRow(interactionSpec, key, stored)!.snapshot, event)
    : { code: "conflict" as const, message: "Ответ не применим к текущему состоянию запроса.", details: {} };
  if (refusal) throw new AppError(refusal.code, refusal.message, refusal.details);
  return { kind: "reply", interactionId: it.id, stored: stored!, event, text: event.text };
}
