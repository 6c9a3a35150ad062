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
  /** The delivery's number within its conversation (migration 000040): 1, 2, 3 … */
  seq: number;
  event: string;
  payload: Record<string, unknown>;
  attempts: number;
  /** Where the retry horizon counts from: creation, or a re-delivery from the dead letters. */
  retryFrom: Date;
}

/**
 * A delivery, in the transaction of what caused it, numbered next in its conversation. The
 * counter's row lock (outbox_seq) orders two transactions enqueueing for one conversation, so
 * numbers follow commit order and never repeat.
 */
export async function enqueueOutbox(
  tx: Tx,
  row: { tenantId: string; conversationId: string; event: string; payload: Record<string, unknown> },
): Promise<string> {
  const [r] = await tx<{ id: bigint }[]>`
    with n as (
      insert into outbox_seq (conversation_id, last_seq) values (${row.conversationId}, 1)
      on conflict (conversation_id) do update set last_seq = outbox_seq.last_seq + 1
      returning last_seq)
    insert into outbox (tenant_id, conversation_id, event, payload, seq)
    select ${row.tenantId}, ${row.conversationId}, ${row.event}, ${tx.json(row.payload as never)}, n.last_seq from n
    returning id`;
  return String(r!.id);
}

type RawRow = {
  id: bigint;
  tenant_id: string;
  conversation_id: string;
  seq: bigint | number;
  event: string;
  payload: Record<string, unknown>;
  attempts: number;
  retry_from: Date;
};

/**
 * Claims due rows, at most one per conversation and only the first pending one of it (lowest
 * seq): one conversation's deliveries go one at a time, in order, while different conversations
 * go in parallel. Each claimed row's next attempt moves `leaseMs` ahead first, so another process
 * (or a pass of this one) skips it — and the rows behind it — while this delivery is in flight.
 */
export async function claimDue(sql: Tx, limit: number, leaseMs: number): Promise<OutboxRow[]> {
  const rows = await sql<RawRow[]>`
    update outbox o set next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
    where o.id in (
      select p.id from outbox p
      where p.status = 'pending' and p.next_attempt_at <= now()
        and not exists (
          select 1 from outbox e
          where e.conversation_id = p.conversation_id and e.status = 'pending' and e.seq < p.seq)
      order by p.next_attempt_at, p.id limit ${limit} for update skip locked)
    returning o.id, o.tenant_id, o.conversation_id, o.seq, o.event, o.payload, o.attempts, o.retry_from`;
  return rows.map((r) => ({
    id: String(r.id),
    tenantId: r.tenant_id,
    conversationId: r.conversation_id,
    seq: Number(r.seq),
    event: r.event,
    payload: r.payload,
    attempts: r.attempts,
    retryFrom: r.retry_from,
  }));
}

/**
 * Milliseconds until the earliest claimable row comes due (≤ 0: due now) — a conversation's first
 * pending row, as `claimDue` takes them, so a row behind another process's lease does not count as
 * due — or null when nothing is pending: the dispatcher sleeps until then instead of polling (an idle server runs no statement
 * for its webhooks but a rare safety look). Reads the partial index `outbox_due`.
 */
export async function nextDueInMs(sql: Tx): Promise<number | null> {
  const [row] = await sql<{ ms: number | null }[]>`
    select (extract(epoch from (min(next_attempt_at) - now())) * 1000)::float8 as ms
    from outbox p
    where p.status = 'pending'
      and not exists (
        select 1 from outbox e where e.conversation_id = p.conversation_id and e.status = 'pending' and e.seq < p.seq)`;
  return row?.ms ?? null;
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

export interface DeadLetter {
  id: string;
  outboxId: string;
  conversationId: string;
  seq: number;
  event: string;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
}

/** The tenant's dead letters, newest first. */
export async function listDeadLetters(sql: Tx, tenantId: string, limit = 100): Promise<DeadLetter[]> {
  const rows = await sql<
    {
      id: bigint;
      outbox_id: bigint;
      conversation_id: string;
      seq: bigint | number;
      event: string;
      attempts: number;
      last_error: string | null;
      created_at: Date;
    }[]
  >`
    select d.id, d.outbox_id, d.conversation_id, o.seq, d.event, d.attempts, d.last_error, d.created_at
    from webhook_dead_letters d join outbox o on o.id = d.outbox_id
    where d.tenant_id = ${tenantId}
    order by d.id desc limit ${limit}`;
  return rows.map((r) => ({
    id: String(r.id),
    outboxId: String(r.outbox_id),
    conversationId: r.conversation_id,
    seq: Number(r.seq),
    event: r.event,
    attempts: r.attempts,
    lastError: r.last_error,
    createdAt: r.created_at,
  }));
}

/**
 * Sends a dead letter again: its outbox row is pending once more, due now, with a fresh retry
 * horizon and the same id and seq (a receiver that got it after all deduplicates it). Returns
 * the outbox row's id, or null when the tenant has no such dead letter.
 */
export async function redeliverDeadLetter(sql: Tx, tenantId: string, id: string): Promise<string | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  const rows = await sql<{ id: bigint }[]>`
    with gone as (
      delete from webhook_dead_letters where id = ${id} and tenant_id = ${tenantId} returning outbox_id)
    update outbox set status = 'pending', attempts = 0, next_attempt_at = now(), retry_from = now(), last_error = null
    where id in (select outbox_id from gone)
    returning id`;
  return rows[0] ? String(rows[0].id) : null;
}
