import type postgres from "postgres";
import type { Tx } from "./db";
import { StaleVersionError } from "./errors";
import { machineEventsInsert, type RunMessages } from "./machine-events";
import { closeRunUpdate, notifyFollowed, ofConversation, type RunClose, type RunEventRow } from "./runs";
import type { ReplyMessage } from "./run-events-pack";
import { snapshotWriteCte, type SnapshotWrite } from "./snapshots";

/** Everything a turn stores, written by `commitTurn`. */
export interface TurnCommit {
  snapshot: SnapshotWrite;
  /** The events the machine took this turn, for its log (machine_events). */
  log?: {
    events: unknown[];
    runId: string | null;
    machine: string | null;
    /** The texts of the messages `writes` stores under the run: logged events refer to them (storage/machine-events.ts). */
    messages?: RunMessages;
  };
  /** The turn's run: its events not stored yet and how it ends. */
  run?: {
    id: string;
    /** The run's conversation (its run row's): a stored run_started refers to it (storage/runs.ts). */
    conversationId?: string;
    events: RunEventRow[];
    close: RunClose;
    notify?: boolean;
    /**
     * The assistant message `writes` stores for this run (its text and meta): a `final` whose reply
     * is exactly this text refers to the message instead of storing it again, and so do its
     * fields the meta holds (storage/runs.ts FINAL_OF_MESSAGE).
     */
    replyMessage?: ReplyMessage;
  };
  /**
   * The caller's writes (messages, projections) as CTE bodies of the same statement, each
   * written only when `when` holds (the snapshot's version check passed). Null entries are skipped.
   * No two of them — nor the run's close — may update the same row: one statement changes a row once.
   */
  writes?: (when: postgres.Fragment) => (postgres.Fragment | null)[];
}

/** The turn's run had already ended (crash recovery took its process for dead): nothing was written. */
export class RunClosedError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} is no longer running`);
  }
}

/**
 * A turn's commit as ONE statement — atomic on its own, so outside a transaction it needs no
 * BEGIN/COMMIT round trips and commits once:
 *
 *   t_run   reads that the run is still running (a run failed by crash recovery is not);
 *   t_snap  writes the snapshot with its row-version check, only if t_run found the run;
 *   then the log, the caller's writes, and the run's close with its last events (in the run's row,
 *   migration 000027) — each only if t_snap returned a row. A stale snapshot or a closed run thus
 *   writes nothing.
 *
 * The run's row is not locked up front: a lock record costs WAL every turn, and only crash recovery
 * ends another process's run. Should it close this run between t_run's read and t_up's update, t_up
 * (waiting for it, then re-checking `status = 'running'`) updates nothing, and the statement fails
 * through abort_statement — nothing it wrote commits — and the turn gets RunClosedError as if t_run
 * had seen it. Locks: the snapshot's row, then the run's; the heartbeats lock run rows only and the
 * background flush key-shares them (its run_events rows' foreign key), so nobody waits on this
 * statement in a cycle.
 * Every other CTE reads the last seq (messages, machine_events) in the statement's snapshot:
 * whenever the version check passed, no other turn on the key committed since — it would have
 * changed the snapshot row first.
 *
 * Inside a transaction it works the same (a caller with writes that need one runs them after it).
 * Returns the new row version; throws StaleVersionError or RunClosedError.
 */
export async function commitTurn(
  sql: Tx,
  c: TurnCommit,
  /** Filled with the statement's cancel, for a caller that stops waiting (storage/deadline.ts). */
  handle?: { cancel?: () => void },
): Promise<number> {
  const s = c.snapshot;
  const run = c.run;
  const passed = sql`exists (select 1 from t_snap)`;
  const ctes: postgres.Fragment[] = [];
  if (run)
    ctes.push(
      sql`t_run as (select id from runs where id = ${run.id} and ${ofConversation(sql, run.conversationId)} status = 'running')`,
    );
  ctes.push(sql`t_snap as (${snapshotWriteCte(sql, s, run ? sql`exists (select 1 from t_run)` : sql`true`)})`);
  if (c.log && c.log.events.length > 0)
    ctes.push(
      sql`t_log as (${machineEventsInsert(sql, s.key, s.conversationId, c.log.events, c.log.runId, c.log.machine, passed, c.log.messages)})`,
    );
  (c.writes?.(passed) ?? []).forEach((w, i) => {
    if (w) ctes.push(sql`${sql(`t_w${i}`)} as (${w})`);
  });
  if (run) {
    // The turn's events end with its `done`, numbered after every event the run has emitted; the
    // close stores those not stored yet in the run's row.
    const close = closeRunUpdate(sql, run.id, run.events, run.close, passed, {
      replyMessage: run.replyMessage,
      conversationId: run.conversationId,
    });
    ctes.push(sql`t_up as (${close} returning id, followed_at)`);
  }
  let rows: { row_version: number | null; running: number }[];
  try {
    const q = sql<{ row_version: number | null; running: number }[]>`
      with ${joinFragments(sql, ctes)}
      select (select row_version from t_snap) as row_version,
             ${run ? sql`(select count(*) from t_run)::int` : sql`1`} as running
             ${run ? sql`, case when ${passed} and not exists (select 1 from t_up) then abort_statement(${RUN_CLOSED}) end as closed` : sql``}
             ${run?.notify ? sql`, (${notifyFollowed(sql, sql`t_up`)}) as notified` : sql``}`;
    if (handle) handle.cancel = () => void q.cancel();
    rows = await q;
  } catch (e) {
    if (run && (e as { code?: string; message?: string }).code === "P0001" && (e as Error).message === RUN_CLOSED)
      throw new RunClosedError(run.id);
    throw e;
  }
  const r = rows[0]!;
  if (r.running === 0) throw new RunClosedError(run!.id);
  if (r.row_version === null) throw new StaleVersionError(`snapshot ${s.key}`, s.expectedRowVersion);
  return r.row_version;
}

/** abort_statement's reason when the run was closed under the commit (migration 000027). */
const RUN_CLOSED = "run_closed";

/** Fragments separated by commas. */
function joinFragments(sql: Tx, parts: postgres.Fragment[]): postgres.Fragment {
  return parts.slice(1).reduce((acc, p) => sql`${acc}, ${p}`, parts[0]!);
}
