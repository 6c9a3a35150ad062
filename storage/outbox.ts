import type { Tx } from "./db";

/**
 * The transactional outbox of outbound webhooks (issue 17 item 1): a row is written in the same
 * transaction as the turn that caused it, so a delivery exists exactly when the turn committed;
 * http/webhook.ts sends it afterwards, retries with backoff and moves it to the dead letters
 * after the last failure.
 */

export interface OutboxRow {
  id: string;
  tenantId: string;
  conversationId: string;
  event: string;
  payload: Record<string, unknown>;
  attempts: number;
}

export async function enqueueOutbox(
  tx: Tx,
  row: { tenantId: string; conversationId: string; event: string; payload: Record<string, unknown> },
): Promise<string> {
  const [r] = await tx<{ id: bigint }[]>`
    insert into outbox (tenant_id, conversation_id, event, payload)
    values (${row.tenantId}, ${row.conversationId}, ${row.event}, ${tx.json(row.payload as never)})
    returning id`;
  return String(r!.id);
}

/**
 * Claims due rows: each claimed row's next attempt moves `leaseMs` ahead first, so another
 * process (or a pass of this one) skips it while this delivery is in flight.
 */
export async function claimDue(sql: Tx, limit: number, leaseMs: number): Promise<OutboxRow[]> {
  const rows = await sql<
    {
      id: bigint;
      tenant_id: string;
      conversation_id: string;
      event: string;
      payload: Record<string, unknown>;
      attempts: number;
    }[]
  >`
    update outbox o set next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
    where o.id in (
      select id from outbox where status = 'pending' and next_attempt_at <= now()
      order by next_attempt_at, id limit ${limit} for update skip locked)
    returning o.id, o.tenant_id, o.conversation_id, o.event, o.payload, o.attempts`;
  return rows.map((r) => ({
    id: String(r.id),
    tenantId: r.tenant_id,
    conversationId: r.conversation_id,
    event: r.event,
    payload: r.payload,
    attempts: r.attempts,
  }));
}

export async function markDelivered(sql: Tx, id: string, attempts: number): Promise<void> {
  await sql`update outbox set status = 'delivered', attempts = ${attempts}, delivered_at = now(), last_error = null where id = ${id}`;
}

/** A failed attempt: retried after `retryInMs`, or (null) dead — copied to webhook_dead_letters in the same transaction. */
export async function markFailed(
  sql: Tx,
  id: string,
  attempts: number,
  error: string,
  retryInMs: number | null,
): Promise<void> {
  if (retryInMs !== null) {
    await sql`update outbox set attempts = ${attempts}, last_error = ${error}, next_attempt_at = now() + ${retryInMs} * interval '1 millisecond' where id = ${id}`;
    return;
  }
  await sql`
    with dead as (
      update outbox set status = 'dead', attempts = ${attempts}, last_error = ${error} where id = ${id} and status = 'pending'
      returning id, tenant_id, conversation_id, event, payload, attempts, last_error)
    insert into webhook_dead_letters (outbox_id, tenant_id, conversation_id, event, payload, attempts, last_error)
    select id, tenant_id, conversation_id, event, payload, attempts, last_error from dead`;
}
