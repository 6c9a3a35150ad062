import type { Sql, Tx } from "./db";
import { markEscalated } from "./inbox";
import { enqueueOutbox } from "./outbox";

/**
 * Reminders of the operator's desk (migration 000035): an escalation nobody took in time
 * (`untaken`), a held thread where nobody wrote (`silent`). Due ones are computed from the
 * conversation's own times, so the deadline survives any restart; raising one inserts its row
 * (once per wait: the wait's start is in the key) and, in the same transaction, its webhook's
 * outbox row. A reminder is active while the wait it measured goes on.
 */

export type ReminderKind = "untaken" | "silent";

export interface Reminder {
  conversationId: string;
  kind: ReminderKind;
  since: string;
  raisedAt: string;
  operator: string | null;
  requeued: boolean;
}

export interface RaisedReminder extends Reminder {
  tenantId: string;
  system: string;
  reason: string | null;
}

interface Row {
  conversation_id: string;
  kind: ReminderKind;
  since: Date;
  raised_at: Date;
  operator: string | null;
  requeued: boolean;
}
interface RaisedRow extends Row {
  tenant_id: string;
  system: string;
  reason: string | null;
}

const toReminder = (r: Row): Reminder => ({
  conversationId: r.conversation_id,
  kind: r.kind,
  since: r.since.toISOString(),
  raisedAt: r.raised_at.toISOString(),
  operator: r.operator,
  requeued: r.requeued,
});

/** Where the silence of a held thread began: its last message, or the take if nobody wrote since. */
const silenceStart = (tx: Tx) => tx`greatest(c.taken_at, c.last_activity_at)`;

/**
 * Raises every reminder due now, of every tenant, once: two processes sweeping at once insert
 * each row once (`on conflict do nothing`), so only one of them writes its webhook row.
 */
export async function raiseDueReminders(
  sql: Sql,
  o: { untakenAfterMs: number | null; silentAfterMs: number | null; webhook: boolean },
): Promise<RaisedReminder[]> {
  if (o.untakenAfterMs === null && o.silentAfterMs === null) return [];
  return sql.begin(async (tx) => {
    const rows: RaisedRow[] = [];
    if (o.untakenAfterMs !== null)
      rows.push(
        ...(await tx<RaisedRow[]>`
          with ins as (
            insert into inbox_reminders (conversation_id, kind, since)
            select c.id, 'untaken', c.escalated_at from conversations c
             where c.escalated and c.status <> 'taken' and c.escalated_at is not null and c.kind <> 'test'
               and c.escalated_at <= now() - ${o.untakenAfterMs} * interval '1 millisecond'
            on conflict do nothing
            returning conversation_id, kind, since, raised_at, operator, requeued)
          select ins.*, c.tenant_id, c.kind as system, c.escalation_reason as reason
            from ins join conversations c on c.id = ins.conversation_id`),
      );
    if (o.silentAfterMs !== null)
      rows.push(
        ...(await tx<RaisedRow[]>`
          with ins as (
            insert into inbox_reminders (conversation_id, kind, since, operator)
            select c.id, 'silent', ${silenceStart(tx)}, c.taken_by from conversations c
             where c.status = 'taken' and c.taken_at is not null and c.kind <> 'test'
               and ${silenceStart(tx)} <= now() - ${o.silentAfterMs} * interval '1 millisecond'
            on conflict do nothing
            returning conversation_id, kind, since, raised_at, operator, requeued)
          select ins.*, c.tenant_id, c.kind as system, c.escalation_reason as reason
            from ins join conversations c on c.id = ins.conversation_id`),
      );
    const raised = rows.map((r) => ({
      ...toReminder(r),
      tenantId: r.tenant_id,
      system: r.system,
      reason: r.reason,
    }));
    if (o.webhook)
      for (const r of raised)
        await enqueueOutbox(tx, {
          tenantId: r.tenantId,
          conversationId: r.conversationId,
          event: "conversation.reminder",
          payload: {
            tenantId: r.tenantId,
            system: r.system,
            conversationId: r.conversationId,
            kind: r.kind,
            since: r.since,
            waitedMs: Math.max(0, Date.parse(r.raisedAt) - Date.parse(r.since)),
            operator: r.operator,
            reason: r.reason,
            at: r.raisedAt,
          },
        });
    return raised;
  });
}

/**
 * Silent held threads whose reminder asked to return them to the queue and that are still held
 * in the same silence (a crash between the reminder and the return leaves them here for the next sweep).
 */
export async function silentToRequeue(
  sql: Tx,
): Promise<{ tenantId: string; system: string; conversationId: string; since: string }[]> {
  const rows = await sql<{ tenant_id: string; system: string; conversation_id: string; since: Date }[]>`
    select c.tenant_id, c.kind as system, r.conversation_id, r.since from inbox_reminders r join conversations c on c.id = r.conversation_id
     where r.kind = 'silent' and not r.requeued and c.status = 'taken' and ${silenceStart(sql)} = r.since`;
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    system: r.system,
    conversationId: r.conversation_id,
    since: r.since.toISOString(),
  }));
}

/**
 * The second half of returning a silent thread to the queue (after the machine released it):
 * waiting for a human again, with the reason it had, and its reminder marked — in one transaction.
 */
export async function requeueSilent(sql: Sql, conversationId: string, reason: string): Promise<void> {
  await sql.begin(async (tx) => {
    await markEscalated(tx, conversationId, reason);
    await tx`update inbox_reminders set requeued = true
              where conversation_id = ${conversationId} and kind = 'silent' and not requeued`;
  });
}

/**
 * The tenant's reminders still in force: an untaken one while that escalation still waits; a
 * silent one while the thread is held in the same silence, or — returned to the queue — until
 * someone takes it.
 */
export async function activeReminders(sql: Tx, tenantId: string): Promise<Reminder[]> {
  const rows = await sql<Row[]>`
    select r.conversation_id, r.kind, r.since, r.raised_at, r.operator, r.requeued
      from inbox_reminders r join conversations c on c.id = r.conversation_id
     where c.tenant_id = ${tenantId} and (
       (r.kind = 'untaken' and c.escalated and c.status <> 'taken' and c.escalated_at = r.since)
       or (r.kind = 'silent' and not r.requeued and c.status = 'taken' and ${silenceStart(sql)} = r.since)
       or (r.kind = 'silent' and r.requeued and c.escalated and c.status <> 'taken'
           and not exists (select 1 from inbox_reminders u where u.conversation_id = r.conversation_id
                            and u.kind = 'untaken' and u.since > r.since)))
     order by r.raised_at, r.conversation_id`;
  return rows.map(toReminder);
}
