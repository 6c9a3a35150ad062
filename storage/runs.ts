import { accessCondition, ANY_ACCESS, surelyDenied, type ConversationAccess } from "./conversation-credentials";
import type postgres from "postgres";
import type { Tx } from "./db";
import { isUuid } from "./ids";
import { IDEMPOTENCY_TTL_HOURS } from "./idempotency";
import { FINAL_OF_MESSAGE, packRunEvents, unpackRunEvents, type ReplyMessage, type StoredRow } from "./run-events-pack";

export type RunStatus = "running" | "completed" | "failed";

export interface RunRow {
  id: string;
  conversationId: string;
  tenantId: string;
  kind: string;
  status: RunStatus;
  outcome: string | null;
  reasonCodes: string[];
  errorCode: string | null;
  owner: string;
  heartbeatAt: Date;
}

export interface RunEventRow {
  seq: number;
  event: string;
  data: unknown;
}

/** What a run row holds when it starts. */
export interface RunStartRow {
  id: string;
  conversationId: string;
  tenantId: string;
  kind: string;
  owner: string;
}

/**
 * The run row's insert, one row per row of `from` (a CTE name the caller's statement defines:
 * the run starts only if that row exists). The one copy of the statement that starts a run.
 */
export const insertRunFrom = (sql: Tx, r: RunStartRow, from: postgres.PendingQuery<postgres.Row[]>) =>
  sql`insert into runs (id, conversation_id, tenant_id, kind, status, owner)
      select ${r.id}, ${r.conversationId}, ${r.tenantId}, ${r.kind}, 'running', ${r.owner} from ${from}`;

/** A run row with a synchronous commit (tests, tools): `startRun` without a key. */
export async function insertRun(sql: Tx, r: RunStartRow): Promise<void> {
  await startRun(sql, r, { asyncCommit: false });
}

/**
 * The statement's own implicit transaction commits without waiting for its WAL flush
 * (`synchronous_commit = off` for this transaction only). The row is visible to every
 * session at once; it becomes durable with the next synchronous commit — the turn's own —
 * because WAL is flushed in order, or within 3 × wal_writer_delay by the WAL writer.
 * Only for single statements outside a transaction block: inside one it would make the
 * whole transaction asynchronous. Only on a PostgreSQL server: embedded PGlite has no WAL
 * writer and lives in the application's process, so an async commit there is lost with a
 * kill -9 (measured) — there a synchronous commit costs a write(), not an fsync, anyway.
 */
const asyncCommit = (sql: Tx) => sql`select set_config('synchronous_commit', 'off', true) as off`;
/**
 * The `_` CTE of a statement that starts a run: it commits asynchronously when asked (a no-op
 * otherwise). A statement with it must select from `_`, or the setting is never evaluated.
 */
export const commitMode = (sql: Tx, async: boolean | undefined) =>
  async ? asyncCommit(sql) : sql`select true as sync`;

/** An Idempotency-Key claimed together with the run row (see storage/idempotency.ts). */
export interface KeyClaim {
  key: string;
  requestHash: string;
  /** The run the key named before, when that run failed (or the key expired): the key moves to the new run. */
  replaces: string | null;
}

/**
 * How a run row gets in: `startRun` by default; a route that reads what its turn needs may
 * start the run in that same statement instead (systems/clinic/store/turn-context.ts) — one
 * round trip and one transaction less per turn. It resolves to what that statement read (the
 * turn's context, handed to the route's work: http/sse.ts), or null when the row did not go in.
 */
export type RunStart<S = unknown> = (sql: Tx, r: RunStartRow, o: { asyncCommit: boolean }) => Promise<S | null>;

/**
 * The run row at run start, so a resuming client and a crash recovery can find it, without
 * a second durable commit per turn: if the database itself crashed before the turn's commit,
 * losing the row loses nothing a client could have been promised (the turn was not stored).
 *
 * With a key: the key and the run go in in one statement, and the run only if the key was
 * claimed (new, or moved from the failed/expired run `replaces`). False: another request holds
 * the key — the caller replays that request's run. A second running run of the conversation
 * fails the statement with a unique violation (runs_one_running_per_conversation).
 */
export async function startRun(
  sql: Tx,
  r: RunStartRow,
  o: { asyncCommit: boolean; claim?: KeyClaim },
): Promise<boolean> {
  if (!o.claim) {
    await sql`with _ as (${commitMode(sql, o.asyncCommit)}) ${insertRunFrom(sql, r, sql`_`)}`;
    return true;
  }
  const c = o.claim;
  const rows = await sql<{ id: string }[]>`
    with _ as (${commitMode(sql, o.asyncCommit)}),
    k as (insert into idempotency_keys (tenant_id, key, request_hash, run_id, conversation_id)
          select ${r.tenantId}, ${c.key}, ${c.requestHash}, ${r.id}, ${r.conversationId} from _
          on conflict (tenant_id, key) do update
            set request_hash = excluded.request_hash, run_id = excluded.run_id, conversation_id = excluded.conversation_id, created_at = now()
            where idempotency_keys.run_id = ${c.replaces ?? null}
               or idempotency_keys.created_at <= now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})
          returning 1)
    ${insertRunFrom(sql, r, sql`k`)}
    returning id`;
  return rows.length === 1;
}

/**
 * A parameter sent as `json` (the text as JSON.stringify wrote it), not `jsonb`: run_events.data
 * and machine_events.event are json columns (migration 000013), stored as sent.
 */
export const JSON_OID = 114;

/**
 * The insert of packed rows, as a CTE body. Two writers never produce the same key at once (a
 * row's key is its last id; see migration 000012); a retried write of the same range is skipped.
 */
const insertPacked = (
  tx: Tx,
  rows: { run_id: string; seq: number; first_seq: number | null; event: string; data: unknown }[],
) =>
  tx`insert into run_events (run_id, seq, first_seq, event, data)
     select e.run_id, e.seq, e.first_seq, e.event, e.data
     from json_to_recordset(${tx.typed(rows as never, JSON_OID)}) as e(run_id uuid, seq integer, first_seq integer, event text, data json)
     on conflict (run_id, seq) do nothing
     returning 1`;

/**
 * The background flush of every live run of a process in one statement: their new events.
 * Asynchronous commit on a server, as for one run. It writes nothing into the runs' own rows:
 * the process heartbeat (`touchRuns`, every RUN_STALE_MS / 3) keeps a live run from being taken
 * for dead, so a heartbeat here — a row update and its row lock per run every 250 ms, ≈ 3 per
 * paced turn — bought nothing (issue 46). With `notify`, the runs a follower on another process
 * reads are announced; their `followed_at` is read, not locked.
 */
export async function flushRunsEvents(
  sql: Tx,
  batch: { runId: string; conversationId?: string; events: RunEventRow[] }[],
  o: { asyncCommit: boolean; notify?: boolean },
): Promise<void> {
  const rows = batch.flatMap((b) =>
    packRunEvents(
      b.events,
      undefined,
      b.conversationId ? { id: b.runId, conversationId: b.conversationId } : undefined,
    ).map((r) => ({ run_id: b.runId, ...r })),
  );
  if (rows.length === 0) return;
  // `_` is selected from, or its setting would never be evaluated; `ev` runs whether read or not.
  await sql`with _ as (${commitMode(sql, o.asyncCommit)}),
                 ev as (${insertPacked(sql, rows)})
            ${
              o.notify
                ? sql`, up as (select r.id, r.followed_at from runs r, _
                               where r.id = any(${batch.map((b) => b.runId)}::uuid[]) and r.status = 'running')
                      ${notifyFollowed(sql)}`
                : sql`select count(*) from _`
            }`;
}

/** Run ids are announced on this channel when events of theirs are stored (PostgreSQL server only). */
export const RUN_EVENTS_CHANNEL = "run_events";

/**
 * The end of a statement whose `up` CTE returned (id, followed_at) of runs that just got
 * events: a notification for each run a follower on another process read recently (it marks
 * `followed_at` as it polls). Runs nobody follows remotely cost no NOTIFY — which matters in a
 * turn's own transaction: PostgreSQL serializes the commits of notifying transactions.
 */
export const notifyFollowed = (sql: Tx, up: postgres.Fragment = sql`up`) =>
  sql`select count(pg_notify(${RUN_EVENTS_CHANNEL}, id::text)) from ${up} where followed_at > now() - make_interval(secs => ${FOLLOWED_WITHIN_MS / 1000})`;

/** A follower on another process marks the run at least this often while it waits (see server/run-waker.ts). */
export const FOLLOWED_WITHIN_MS = 5_000;

/**
 * Calls `onRun(runId)` for every run id announced on RUN_EVENTS_CHANNEL, on a connection of
 * its own (postgres.js opens one for LISTEN). Resolves with the function that stops listening.
 */
export async function listenRunEvents(
  sql: postgres.Sql,
  onRun: (runId: string) => void,
  /** Called each time LISTEN is in place: first, and again after its connection was re-established. */
  onListen?: () => void,
): Promise<() => Promise<void>> {
  const { unlisten } = await sql.listen(RUN_EVENTS_CHANNEL, onRun, onListen);
  return unlisten;
}

/** Marks runs as followed from another process, all in one statement (http/run-waker.ts). */
export async function markFollowedRuns(sql: Tx, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`update runs set followed_at = now() where id = any(${ids}::uuid[]) and status = 'running'`;
}

/**
 * The run's last events and its end in one statement (one round trip inside the turn's
 * transaction); true when this ended the run. It touches the run's row only: the background
 * flush locks run rows with SKIP LOCKED, so the two never wait on each other in a cycle.
 */
export async function closeRun(
  tx: Tx,
  runId: string,
  events: RunEventRow[],
  r: RunClose,
  o: { notify?: boolean; conversationId?: string } = {},
): Promise<boolean> {
  const close = closeRunUpdate(tx, runId, events, r, undefined, { conversationId: o.conversationId });
  const res = await tx<{ closed: number }[]>`with up as (${close} returning id, followed_at)
           select (select count(*) from up)::int as closed${o.notify ? tx`, (${notifyFollowed(tx)}) as notified` : tx``}`;
  // False: the run had already ended — e.g. closed by crash recovery that took its process
  // for dead. The caller's transaction must not commit a turn whose run is failed.
  return res[0]?.closed === 1;
}

/** How a run ends (its row's final fields). */
export interface RunClose {
  status: Exclude<RunStatus, "running">;
  outcome?: string | null;
  reasonCodes?: string[];
  errorCode?: string | null;
}

/**
 * `closeRun`'s statement as a CTE body (for a turn's single commit statement too): the update that
 * ends the run and stores the events it has not stored yet in its row (the `tail_*` columns,
 * migration 000027), open at its end for more conditions (`and …`) and a `returning` clause.
 * It writes only when `when` holds.
 */
export function closeRunUpdate(
  tx: Tx,
  runId: string,
  events: RunEventRow[],
  r: RunClose,
  when: postgres.Fragment = tx`true`,
  o: { replyMessage?: ReplyMessage; conversationId?: string } = {},
): postgres.Fragment {
  const run = o.conversationId ? { id: runId, conversationId: o.conversationId } : undefined;
  // The events not stored yet go into the closing update's row (migration 000027): one packed row,
  // as run_events would hold it. A run ends once (`status = 'running'`), so nothing else writes them.
  const tail = packRunEvents(events, o.replyMessage, run)[0];
  return tx`update runs set status = ${r.status}, outcome = ${r.outcome ?? null}, reason_codes = ${r.reasonCodes?.length ? r.reasonCodes : null},
                error_code = ${r.errorCode ?? null}, finished_at = now(),
                tail_seq = ${tail?.seq ?? null}, tail_first_seq = ${tail?.first_seq ?? null}, tail_event = ${tail?.event ?? null},
                tail_data = ${tail ? tx.typed(tail.data as never, JSON_OID) : null}
              where id = ${runId} and ${ofConversation(tx, o.conversationId)} status = 'running' and ${when}`;
}

/**
 * `conversation_id = … and` when the run's conversation is known. A run is found by its id, but
 * with `status = 'running'` in the condition a plan made while the table was small (a prepared
 * statement keeps its generic plan) reads it through the partial index of running runs
 * (runs_one_running_per_conversation) filtered by id: every running run's row visited, 16–64
 * under load, twice per commit (seen in auto_explain). Naming the conversation makes either
 * index a lookup of one entry.
 */
export function ofConversation(tx: Tx, conversationId: string | undefined): postgres.Fragment {
  return conversationId ? tx`conversation_id = ${conversationId} and` : tx``;
}

/** A run refused before its stream opened: gone with its events and the Idempotency-Key that named it. */
export async function deleteRun(sql: Tx, runId: string): Promise<void> {
  await sql`with k as (delete from idempotency_keys where run_id = ${runId}) delete from runs where id = ${runId}`;
}

/**
 * A run by id. `access`: what a client's request must prove to reach the run's conversation
 * (a route passes `accessOf(c)`; checked in this statement) — internal readers reach every run.
 */
export async function getRun(sql: Tx, id: string, access: ConversationAccess = ANY_ACCESS): Promise<RunRow | null> {
  if (!isUuid(id) || surelyDenied(access)) return null;
  const rows = await sql<
    {
      id: string;
      conversation_id: string;
      tenant_id: string;
      kind: string;
      status: RunStatus;
      outcome: string | null;
      reason_codes: string[] | null;
      error_code: string | null;
      owner: string;
      heartbeat_at: Date;
    }[]
  >`
    select id, conversation_id, tenant_id, kind, status, outcome, reason_codes, error_code, owner, heartbeat_at from runs where id = ${id}
      ${access.any ? sql`` : sql`and exists (select 1 from conversations where conversations.id = runs.conversation_id ${accessCondition(sql, access)})`}`;
  const r = rows[0];
  return r
    ? {
        id: r.id,
        conversationId: r.conversation_id,
        tenantId: r.tenant_id,
        kind: r.kind,
        status: r.status,
        outcome: r.outcome,
        reasonCodes: r.reason_codes ?? [],
        errorCode: r.error_code,
        owner: r.owner,
        heartbeatAt: r.heartbeat_at,
      }
    : null;
}

/** One statement for any number of events, so a turn's commit stays a fixed number of statements. */
export async function appendRunEvents(tx: Tx, runId: string, events: RunEventRow[]): Promise<void> {
  if (events.length === 0) return;
  await tx`with ev as (${insertPacked(
    tx,
    packRunEvents(events).map((r) => ({ run_id: runId, ...r })),
  )}) select count(*) from ev`;
}

/** A run's stored `error` and `done` events, in order. */
export async function listRunEnding(sql: Tx, runId: string): Promise<RunEventRow[]> {
  // `error`/`done` may sit inside a batch row, so the rows are unpacked here (a rare path: ended runs only).
  return (await listRunEvents(sql, runId, 0)).filter((e) => e.event === "error" || e.event === "done");
}

/**
 * The stored events after `afterSeq` (an id inside a batch row included: the batch's later events
 * are returned): the run's run_events rows, then the ones its closing update stored in its row
 * (migration 000027) — the last ids, and possibly a longer batch from a first id a flush stored too.
 */
export async function listRunEvents(sql: Tx, runId: string, afterSeq: number): Promise<RunEventRow[]> {
  const rows = await sql<StoredRow[]>`select e.seq, e.first_seq, e.event, e.data, r.id as run_id, r.conversation_id,
           m.text as reply, m.meta as reply_meta
    from runs r
    cross join lateral (select seq, first_seq, event, data from run_events where run_id = r.id and seq > ${afterSeq}
                        union all
                        select r.tail_seq, r.tail_first_seq, r.tail_event, r.tail_data where r.tail_seq > ${afterSeq}) e
    -- A batch with the run's final as FINAL_OF_MESSAGE: its reply is the run's assistant message
    -- (the run's last messages are the conversation's last ones when it is resumed, most of the time).
    left join lateral (select m.text, m.meta from messages m
                       -- the prefix: FINAL_OF_MESSAGE and FINAL_OF_MESSAGE_META
                       where e.first_seq is not null and strpos(e.data::text, ${`"${FINAL_OF_MESSAGE}`}) > 0
                         and m.conversation_id = r.conversation_id and m.run_id = r.id and m.role = 'assistant'
                       order by m.seq desc limit 1) m on true
    where r.id = ${runId} order by e.seq`;
  return unpackRunEvents(rows, afterSeq);
}

/** A follower marks the run as watched, so its owner keeps working after the original client left. */
export async function markFollowed(sql: Tx, id: string): Promise<void> {
  await sql`update runs set followed_at = now() where id = ${id} and status = 'running'`;
}

/** Heartbeat of a live run; tells its owner whether someone followed it recently. */
export async function heartbeatRun(sql: Tx, id: string, followedWithinMs: number): Promise<boolean> {
  const rows = await sql<{ followed: boolean }[]>`
    update runs set heartbeat_at = now() where id = ${id}
    returning coalesce(followed_at > now() - make_interval(secs => ${followedWithinMs / 1000}), false) as followed`;
  return rows[0]?.followed ?? false;
}

/** The process heartbeat of its live runs; asynchronous commit on a server (a heartbeat needs no fsync). */
export async function touchRuns(sql: Tx, ids: string[], o: { asyncCommit?: boolean } = {}): Promise<void> {
  if (ids.length === 0) return;
  await sql`with _ as (${commitMode(sql, o.asyncCommit)})
            update runs set heartbeat_at = now() from _ where id = any(${ids}::uuid[]) and status = 'running'`;
}

export const ABANDONED_MESSAGE = "Обработка сообщения прервалась: сервер был перезапущен. Отправьте сообщение ещё раз.";

/** The outcome of a run closed because its process died: its `error` and `done` were stored by someone else. */
export const ABANDONED = "abandoned";

/**
 * The most events one run may emit (Run refuses more; reply caps keep real runs far below).
 * A dead process may have streamed events it never stored, so recovery numbers the ending it
 * writes past this bound: a client resuming from any id it saw gets `error` and `done`, and one
 * that already got that ending gets nothing — by id alone, without guessing what the dead process sent.
 */
export const MAX_RUN_EVENTS = 1_000_000;

/**
 * Runs whose process died mid-turn: still 'running' but owned by a dead owner (or silent for
 * too long). They are closed as failed with a stored `error` + `done` — in one statement, so
 * nobody sees a failed run without its ending — numbered past MAX_RUN_EVENTS, so a client
 * resuming with any Last-Event-ID it got from the dead process sees how the run ended.
 * Returns the ids it closed.
 */
export function failAbandonedRuns(
  sql: Tx,
  opts: {
    staleAfterMs: number;
    exceptOwner?: string;
    ownerIs?: string;
    /** Runs this process is running (its hub's live ids): never closed, whatever their heartbeat. */
    exceptIds?: string[];
    /** Only this conversation's runs (an erasure that found one running). */
    conversationId?: string;
  },
): Promise<string[]> & { cancel(): void } {
  const error = sql.json({ code: "internal", message: ABANDONED_MESSAGE } as never);
  const q = sql<{ id: string }[]>`
    with dead as (
      update runs set status = 'failed', error_code = 'internal', outcome = ${ABANDONED}, reason_codes = '{internal}', finished_at = now()
      where status = 'running'
        and (${opts.ownerIs ?? null}::uuid is null or owner = ${opts.ownerIs ?? null})
        and (${opts.exceptOwner ?? null}::uuid is null or owner <> ${opts.exceptOwner ?? null})
        and heartbeat_at < now() - make_interval(secs => ${opts.staleAfterMs / 1000})
        ${opts.exceptIds?.length ? sql`and id <> all(${opts.exceptIds}::uuid[])` : sql``}
        ${opts.conversationId ? sql`and conversation_id = ${opts.conversationId}` : sql``}
      returning id),
    stored as (
      select d.id, coalesce(max(e.seq), 0) as seq from dead d left join run_events e on e.run_id = d.id group by d.id),
    ending as (
      insert into run_events (run_id, seq, event, data)
      select id, greatest(seq, ${MAX_RUN_EVENTS}) + 1, 'error', ${error} from stored
      union all
      select id, greatest(seq, ${MAX_RUN_EVENTS}) + 2, 'done', '{}'::jsonb from stored
      on conflict (run_id, seq) do nothing)
    -- Its followers on any process wake and read the ending (they do not poll).
    select id, pg_notify(${RUN_EVENTS_CHANNEL}, id::text) from dead`;
  // Cancellable, for a caller with a deadline (storage/deadline.ts).
  return Object.assign(
    q.then((rows) => rows.map((r) => r.id)),
    { cancel: () => void q.cancel() },
  );
}
