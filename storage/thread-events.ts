import type { Tx } from "./db";
import { RUN_EVENTS_CHANNEL } from "./runs";

/**
 * A thread's event log (migration 000028): what happens to a conversation outside a patient's
 * turn — an operator takes it, writes, releases or closes it, a patient writes while a human
 * holds it. Numbered per conversation from 1; the number is the SSE id of
 * GET /v1/clinic/threads/{id}/events, so a reconnect with Last-Event-ID misses nothing.
 */

export const THREAD_EVENT_KINDS = [
  "conversation.taken",
  "operator.message",
  "conversation.released",
  "conversation.closed",
  "patient.message",
  "conversation.assigned",
  "conversation.transferred",
] as const;
export type ThreadEventKind = (typeof THREAD_EVENT_KINDS)[number];

export interface ThreadEvent {
  seq: number;
  kind: ThreadEventKind;
  data: Record<string, unknown>;
  at: string;
}

/** The waker key of a thread's followers (http/run-waker.ts shares the run channel with runs). */
export const threadWakeKey = (conversationId: string) => `thread:${conversationId}`;

/**
 * Appends one event in the caller's transaction and announces it to followers in other
 * processes when the transaction commits (NOTIFY is delivered at commit). The next number is
 * read under the caller's write of the conversation's snapshot, which serialises writers.
 */
export async function appendThreadEvent(
  tx: Tx,
  e: { conversationId: string; kind: ThreadEventKind; data: Record<string, unknown>; idempotencyKey?: string | null },
): Promise<ThreadEvent> {
  const [row] = await tx<{ seq: number; created_at: Date }[]>`
    insert into thread_events (conversation_id, seq, kind, data, idempotency_key)
    select ${e.conversationId}, coalesce(max(seq), 0) + 1, ${e.kind}, ${tx.json(e.data as never)}, ${e.idempotencyKey ?? null}
      from thread_events where conversation_id = ${e.conversationId}
    returning seq, created_at`;
  await tx`select pg_notify(${RUN_EVENTS_CHANNEL}, ${threadWakeKey(e.conversationId)})`;
  return { seq: row!.seq, kind: e.kind, data: e.data, at: row!.created_at.toISOString() };
}

/** Wakes the thread's followers in other processes (e.g. the conversation was erased: they end). */
export async function notifyThread(sql: Tx, conversationId: string): Promise<void> {
  await sql`select pg_notify(${RUN_EVENTS_CHANNEL}, ${threadWakeKey(conversationId)})`;
}

interface Row {
  seq: number;
  kind: ThreadEventKind;
  data: Record<string, unknown>;
  created_at: Date;
}
const toEvent = (r: Row): ThreadEvent => ({ seq: r.seq, kind: r.kind, data: r.data, at: r.created_at.toISOString() });

/** The events after `after`, in order (at most `limit`). */
export async function listThreadEvents(sql: Tx, conversationId: string, after: number, limit = 500) {
  const rows = await sql<Row[]>`
    select seq, kind, data, created_at from thread_events
     where conversation_id = ${conversationId} and seq > ${after}
     order by seq limit ${limit}`;
  return rows.map(toEvent);
}

/** The event an earlier request with this Idempotency-Key wrote, if any. */
export async function findThreadEventByKey(sql: Tx, conversationId: string, key: string): Promise<ThreadEvent | null> {
  const [r] = await sql<Row[]>`
    select seq, kind, data, created_at from thread_events
     where conversation_id = ${conversationId} and idempotency_key = ${key}`;
  return r ? toEvent(r) : null;
}

/** The thread's last `conversation.taken` event (a repeated take by the holder answers with it). */
export async function lastTake(sql: Tx, conversationId: string): Promise<ThreadEvent | null> {
  const [r] = await sql<Row[]>`
    select seq, kind, data, created_at from thread_events
     where conversation_id = ${conversationId} and kind = 'conversation.taken'
     order by seq desc limit 1`;
  return r ? toEvent(r) : null;
}

/** The log's last number (0: empty): a client that has read the thread follows from here. */
export async function lastThreadEventSeq(sql: Tx, conversationId: string): Promise<number> {
  const [r] = await sql<{ seq: number | null }[]>`
    select max(seq) as seq from thread_events where conversation_id = ${conversationId}`;
  return r?.seq ?? 0;
}

/** The thread's last event (a repeated request answers with it); null: the log is empty. */
export async function lastThreadEvent(sql: Tx, conversationId: string): Promise<ThreadEvent | null> {
  const [r] = await sql<Row[]>`
    select seq, kind, data, created_at from thread_events
     where conversation_id = ${conversationId}
     order by seq desc limit 1`;
  return r ? toEvent(r) : null;
}

/** Which threads' events a hand-off figure counts: a tenant's, of one conversation kind, since a moment. */
export interface ThreadEventScope {
  tenantId: string;
  kind?: string;
  since?: Date;
}

/**
 * `from … where …` of the events of the threads in `f` (`e` the event, `c` its conversation): the
 * scope every hand-off figure (handoff-stats.ts, operator-stats.ts) counts over, for the caller to narrow.
 */
export const scopedThreadEvents = (sql: Tx, f: ThreadEventScope) =>
  sql`from thread_events e join conversations c on c.id = e.conversation_id
       where c.tenant_id = ${f.tenantId} ${f.kind ? sql`and c.kind = ${f.kind}` : sql``}
         ${f.since ? sql`and e.created_at >= ${f.since}` : sql``}`;

/** A figure's milliseconds, rounded (SQL's averages and percentiles come back as floats, or text). */
export const roundedMs = (v: number | null) => (v === null ? null : Math.round(Number(v)));
