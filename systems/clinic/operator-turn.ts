import { ANY_ACCESS } from "../../storage/conversation-credentials";
import type { SnapshotFrom } from "xstate";
import { AppError } from "../../driver/errors";
import type { OperatorAction, OperatorResult } from "../../driver/operator-action";
import { pureInitialTransition } from "../../driver/pure";
import { restoreRow, runTurn } from "../../driver/turn";
import type { Sql, Tx } from "../../storage/db";
import type { TransactionSql } from "postgres";
import { isUuid } from "../../storage/ids";
import { readEscalation, setAssignee, setHandling } from "../../storage/inbox";
import { appendMessages } from "../../storage/messages";
import { enqueueOutbox } from "../../storage/outbox";
import {
  appendThreadEvent,
  findThreadEventByKey,
  lastTake,
  lastThreadEvent,
  type ThreadEvent,
  type ThreadEventKind,
} from "../../storage/thread-events";
import type { ClinicDialogueMachine, DialogueContext } from "./dialogue.machine";
import type { HumanEvent, HumanHold } from "./human";
import { clinicSpec, registryFor } from "./registry-load";
import { loadClinicTurnContext, type ClinicTurnContext } from "./store/turn-context";
import type { ClinicState } from "./types";

/**
 * An operator's action on a clinic thread (issue 32) as a turn of its dialogue machine: take,
 * an operator's message, release, close are machine events (systems/clinic/human.ts), logged and
 * replayable; the machine decides whether it accepts one (a message into a thread nobody holds is
 * refused). One transaction writes the snapshot and its log, the operator's message, the inbox
 * fields, the thread's event (which wakes the patient's event stream) and the webhook's row.
 */

export interface ClinicOperatorResult extends OperatorResult {
  state: ClinicState;
  human: HumanHold | null;
  assignee: string | null;
}

const KIND: Record<OperatorAction["kind"], ThreadEventKind> = {
  take: "conversation.taken",
  message: "operator.message",
  release: "conversation.released",
  close: "conversation.closed",
  assign: "conversation.assigned",
  transfer: "conversation.transferred",
};

const REFUSED: Record<OperatorAction["kind"], string> = {
  take: "Диалог уже ведёт другой оператор.",
  message: "Диалог не у оператора: сначала возьмите его («Взять»), потом пишите пациенту.",
  release: "Диалог не у оператора и не передан ему: освобождать нечего.",
  close: "Диалог нельзя закрыть сейчас.",
  assign: "Диалог уже ведёт оператор: чтобы отдать его коллеге, передайте его (transfer).",
  transfer: "Диалог не у оператора: передать можно только диалог, который ведут; возьмите его («Взять»).",
};

function machineEvent(action: OperatorAction, at: string, holder: HumanHold | null): HumanEvent {
  // Who speaks or hands over: the one named, else the thread's holder.
  const who = (named: string | undefined) => named ?? holder?.operator ?? "оператор";
  switch (action.kind) {
    case "take":
      return { type: "operator.take", operator: action.operator, at };
    case "message":
      return { type: "operator.message", operator: who(action.operator), text: action.text, at };
    case "release":
      return { type: "operator.release", at };
    case "close":
      return { type: "operator.close", at };
    case "assign":
      return { type: "operator.assign", operator: action.operator ?? "оператор", assignee: action.assignee, at };
    case "transfer":
      return { type: "operator.transfer", operator: who(action.operator), to: action.to, at };
  }
}

/** How many times an action is applied again after losing a race it could not wait for (a first snapshot row). */
const RETRIES = 5;

/**
 * One writer at a time (issue 43): the action runs in a transaction that first takes the thread's
 * operator lock (a transaction-scoped advisory lock: operators on one thread queue behind each
 * other, even on a thread with no snapshot row yet) and locks the snapshot row (a patient turn's
 * commit waits for this action and then, finding the version moved on, applies itself again on
 * top of it — driver/turn.ts `reapply`). The thread is read under those locks, so the machine
 * judges the action on the state as it is: twenty operators writing at once are twenty messages,
 * the same Idempotency-Key twice at once is one message and a replay, and a take's loser sees the
 * winner (`taken_by_another`). The only race left — two first writers inserting the snapshot row —
 * is settled by reading again and re-applying.
 */
export async function runOperatorAction(
  sql: Sql,
  tenantId: string,
  threadId: string,
  action: OperatorAction,
  o: { webhook: boolean },
): Promise<ClinicOperatorResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await sql.begin((tx) => applyLocked(tx, tenantId, threadId, action, o))) as ClinicOperatorResult;
    } catch (e) {
      if (attempt < RETRIES && e instanceof AppError && e.code === "conflict" && isStale(e)) continue;
      throw e;
    }
  }
}

const isStale = (e: AppError) => !!e.details && typeof e.details === "object" && "key" in e.details;

async function applyLocked(
  tx: TransactionSql,
  tenantId: string,
  threadId: string,
  action: OperatorAction,
  o: { webhook: boolean },
): Promise<ClinicOperatorResult> {
  if (!isUuid(threadId)) throw new AppError("not_found", "Такого диалога нет.");
  await tx`select pg_advisory_xact_lock(hashtextextended(${`thread-operator:${threadId}`}, 0))`;
  await tx`select 1 from machine_snapshots where key = ${threadId} for update`;
  const context = await loadClinicTurnContext(tx, tenantId, threadId, 0, ANY_ACCESS);
  if (!context) throw new AppError("not_found", "Такого диалога нет.");
  const loaded = await registryFor(tx, tenantId, context.settingsVersions);
  const spec = clinicSpec(tenantId, loaded);
  const current = restoreRow(spec, threadId, context.snapshot)?.snapshot ?? pureInitialTransition(spec.machine, {})[0];
  const holder = (current.context as DialogueContext).human;

  if (action.kind === "message" && action.idempotencyKey) {
    const earlier = await findThreadEventByKey(tx, threadId, action.idempotencyKey);
    if (earlier) {
      if (earlier.kind !== "operator.message" || earlier.data.text !== action.text)
        throw new AppError(
          "conflict",
          "Этот Idempotency-Key уже использован для другого сообщения. Для нового сообщения нужен новый ключ.",
          { reason: "idempotency_key_reused" },
        );
      return { event: earlier, ...positionOf(current), replayed: true };
    }
  }
  // Taking a thread one already holds is a repeat, not a conflict.
  if (action.kind === "take" && holder?.operator === action.operator) {
    return { event: await lastTakeEvent(tx, threadId, holder), ...positionOf(current), replayed: true };
  }
  // So is a transfer to whoever holds it now, or an assignment that names the assignee it has
  // (a retried request): answered with the thread as it is, nothing written.
  const assignee = (current.context as DialogueContext).assignee;
  if (
    (action.kind === "transfer" && holder?.operator === action.to) ||
    (action.kind === "assign" && !holder && assignee === action.assignee)
  ) {
    const last = await lastThreadEvent(tx, threadId);
    return { event: last ?? unchanged(action, at0()), ...positionOf(current), replayed: true };
  }
  const at = new Date().toISOString();
  const event = machineEvent(action, at, holder);
  if (!current.can(event as never)) throw refusal(action, holder);

  const r = await runTurn({
    sql: tx as unknown as Sql,
    run: null,
    spec,
    key: threadId,
    conversationId: threadId,
    input: {},
    stored: context.snapshot,
    events: [event as never],
    log: { settings: loaded.versions },
  });
  const written = await record(tx, {
    tenantId,
    context,
    action,
    event,
    after: r.snapshot,
    holder,
    before: current.context as DialogueContext,
    webhook: o.webhook,
  });
  return { event: written, ...positionOf(r.snapshot), replayed: false };
}

const at0 = () => new Date().toISOString();
/** The event a repeat answers with on a thread whose log is still empty. */
const unchanged = (action: OperatorAction, at: string): ThreadEvent => ({
  seq: 0,
  kind: KIND[action.kind],
  data: {},
  at,
});

/** Why the machine does not take the action now: each kind's documented reason (doc/inbox.md). */
function refusal(action: OperatorAction, holder: HumanHold | null): AppError {
  const reason = action.kind === "take" ? "taken_by_another" : action.kind === "assign" ? "held" : "not_held";
  return new AppError("conflict", REFUSED[action.kind], {
    reason,
    ...(holder ? { takenBy: holder.operator } : {}),
  });
}

function positionOf(s: SnapshotFrom<ClinicDialogueMachine>) {
  const c = s.context as DialogueContext;
  return { state: c.state, human: c.human, assignee: c.assignee };
}

async function lastTakeEvent(sql: Tx, threadId: string, holder: HumanHold): Promise<ThreadEvent> {
  const t = await lastTake(sql, threadId);
  return t ?? { seq: 0, kind: "conversation.taken", data: { operator: holder.operator }, at: holder.since };
}

/** The rows an accepted operator action writes beside the snapshot, in its transaction. */
async function record(
  tx: Tx,
  a: {
    tenantId: string;
    context: ClinicTurnContext;
    action: OperatorAction;
    event: HumanEvent;
    after: SnapshotFrom<ClinicDialogueMachine>;
    holder: HumanHold | null;
    before: { assignee: string | null };
    webhook: boolean;
  },
): Promise<ThreadEvent> {
  const id = a.context.threadId;
  const esc = await readEscalation(tx, id);
  const reason = esc?.escalated ? (esc.reason ?? "unknown") : null;
  const now = Date.now();
  const after = positionOf(a.after);
  let data: Record<string, unknown>;
  switch (a.event.type) {
    case "operator.take":
      await setHandling(tx, a.tenantId, id, { status: "taken", takenBy: a.event.operator });
      await setAssignee(tx, a.tenantId, id, a.event.operator);
      data = {
        operator: a.event.operator,
        reason,
        escalated: !!esc?.escalated,
        // Time to take: from the escalation to this take (statistics per reason).
        waitMs: esc?.escalatedAt ? Math.max(0, now - esc.escalatedAt.getTime()) : null,
      };
      break;
    case "operator.message": {
      const [stored] = await appendMessages(tx, id, [
        { role: "operator", text: a.event.text, meta: { author: a.event.operator } },
      ]);
      data = {
        operator: a.event.operator,
        text: a.event.text,
        messageSeq: stored!.seq,
        reason,
        // The first reply since the take: time to first operator reply (statistics per reason).
        first: a.holder?.replies === 0,
        sinceTakenMs: a.holder ? Math.max(0, now - Date.parse(a.holder.since)) : null,
      };
      break;
    }
    case "operator.assign":
      await setAssignee(tx, a.tenantId, id, a.event.assignee);
      data = {
        operator: a.event.operator,
        assignee: a.event.assignee,
        previous: a.before.assignee,
        reason,
      };
      break;
    case "operator.transfer":
      await setHandling(tx, a.tenantId, id, { status: "taken", takenBy: a.event.to });
      await setAssignee(tx, a.tenantId, id, a.event.to);
      data = {
        operator: a.event.operator,
        from: a.holder?.operator ?? null,
        to: a.event.to,
        reason,
        // How long the one who handed it on had held it; their replies meanwhile.
        heldMs: a.holder ? Math.max(0, now - Date.parse(a.holder.since)) : null,
        replies: a.holder?.replies ?? 0,
      };
      break;
    case "operator.release":
    case "operator.close":
      await setHandling(tx, a.tenantId, id, {
        status: a.event.type === "operator.close" ? "closed" : "open",
        clearEscalation: true,
      });
      await setAssignee(tx, a.tenantId, id, null);
      data = {
        operator: a.action.operator ?? a.holder?.operator ?? null,
        reason,
        // Where the bot takes the thread up again.
        branch: after.state.activeBranch,
        step: after.state.step,
      };
      break;
  }
  const written = await appendThreadEvent(tx, {
    conversationId: id,
    kind: KIND[a.action.kind],
    data,
    idempotencyKey: a.action.kind === "message" ? a.action.idempotencyKey : null,
  });
  if (a.webhook)
    await enqueueOutbox(tx, {
      tenantId: a.tenantId,
      conversationId: id,
      event: written.kind,
      payload: {
        tenantId: a.tenantId,
        system: "clinic",
        conversationId: id,
        seq: written.seq,
        ...data,
        at: written.at,
      },
    });
  return written;
}
