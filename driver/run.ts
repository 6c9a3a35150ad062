import { uuidv7 } from "../storage/time-ordered-id";
import type { Sql, Tx } from "../storage/db";
import {
  closeRun,
  deleteRun,
  heartbeatRun,
  MAX_RUN_EVENTS,
  startRun,
  type KeyClaim,
  type RunClose,
  type RunStart,
  type RunStartRow,
  type RunEventRow,
} from "../storage/runs";
import { withinDeadline } from "../storage/deadline";
import { localWake } from "../storage/local-wake";
import { beginWithin } from "../storage/safe-begin";
import { AppError, type ErrorCode } from "./errors";
import type { RunHub } from "./hub";
import { flusherFor, type Flushable, type RunFlusher } from "./run-flusher";

export interface RunInit<S = unknown> {
  sql: Sql;
  hub: RunHub;
  conversationId: string;
  tenantId: string;
  kind: string;
  owner: string;
  debug: boolean;
  /** After the client leaves, how long the run goes on waiting for a follower before it stops. */
  detachGraceMs?: number;
  /** Emitted events also go here (the SSE writer of the request that started the run). */
  sink?: (e: RunEventRow) => void;
  /**
   * Commit the run row and the background event flushes asynchronously (PostgreSQL server
   * only): the turn's own commit is then the one durable commit of a turn. See storage/runs.ts.
   */
  asyncCommits?: boolean;
  /**
   * Announce stored events of runs followed from another process (LISTEN/NOTIFY, PostgreSQL
   * server only), so such a follower wakes when there is something to read instead of polling.
   */
  notifyFollowers?: boolean;
  /**
   * How long the run's writes may wait on the database (issue 47): its turn's commit
   * (`commitMs`) and the close of a failed run (`closeMs`). Past them the turn ends with
   * `error` + `done` at once; ≤ 0 or absent: unbounded (tests of the driver alone).
   */
  deadlines?: RunDeadlines;
  /** Claim this Idempotency-Key with the run row (http/turn-begin.ts); see `Run.claim`. */
  claim?: KeyClaim;
  /**
   * Starts the run row instead of `startRun` (not with `claim`): a route that starts the run in
   * the statement reading its turn's context. It throws to refuse (e.g. no such conversation);
   * what it read comes back with the run (`Claimed.started`).
   */
  start?: RunStart<S>;
}

/** A claimed run, and what the route's own start statement read (absent: `startRun` started it). */
export interface Claimed<E extends EventMap, S = unknown> {
  run: Run<E>;
  started?: S;
}

export interface RunDeadlines {
  commitMs: number;
  closeMs: number;
}

/**
 * Event name → payload type. A system's map is inferred from its zod contract
 * (`systems/<name>/contract.ts`), so `emit` with a wrong name or payload is a type error.
 */
export type EventMap = Record<string, unknown>;
/** One `{event, data}` of a map, e.g. a closing event of `complete`. */
export type RunEvent<E extends EventMap> = { [K in keyof E & string]: { event: K; data: E[K] } }[keyof E & string];

export interface Outcome {
  outcome?: string | null;
  reasonCodes?: string[];
  /**
   * A turn that commits what it has but ends in failure (its closing events carry `error`, e.g.
   * a Workbench answer model that stayed unavailable): the run is stored `failed` with this code.
   */
  errorCode?: ErrorCode;
}

/**
 * One run: numbered events that stream live and end up stored. Events flush to the
 * database in the background while the run goes on (so another process can follow it;
 * one statement for all live runs of the process, see run-flusher.ts) and the rest commit
 * with the turn's own transaction.
 */
/**
 * The run row goes in: by the route's own statement (with what it read), or by `startRun`
 * (claiming the Idempotency-Key with it). Null when it did not go in (the key is another request's).
 */
async function startRow<S>(init: RunInit<S>, row: RunStartRow, asyncCommit: boolean): Promise<{ started?: S } | null> {
  if (init.start && !init.claim) {
    const started = await init.start(init.sql, row, { asyncCommit });
    return started === null ? null : { started };
  }
  return (await startRun(init.sql, row, { asyncCommit, claim: init.claim })) ? {} : null;
}

export class Run<E extends EventMap = EventMap> implements Flushable {
  readonly id = uuidv7();
  private seq = 0;
  private stored = 0;
  private flusher: RunFlusher | null = null;
  /** While detached: checks every 250 ms whether anyone still follows the run. */
  private watchdog: NodeJS.Timeout | null = null;
  private all: RunEventRow[] = [];
  private abort = new AbortController();
  private detachedAt: number | null = null;
  ended = false;
  /** How the run ended, once it has (for the turn's log line and metrics). */
  result: { status: "completed" | "failed"; outcome: string; errorCode?: string } | null = null;
  /** Between `complete` and its commit: closing events are numbered, nothing else may be emitted. */
  private completing = false;
  /**
   * When (performance.now()) the run's row was stored, its first `token` was emitted, and the
   * turn's commit began and ended: the HTTP edge turns them into the turn-phase histogram
   * (ds_turn_phase_seconds), which says where a slow turn waited (doc/bench.md, paced).
   */
  readonly timing = { claimed: Number.NaN, firstToken: Number.NaN, commitStart: Number.NaN, committed: Number.NaN };

  private constructor(private readonly init: RunInit) {}

  get conversationId() {
    return this.init.conversationId;
  }
  get tenantId() {
    return this.init.tenantId;
  }
  get kind() {
    return this.init.kind;
  }
  get debug() {
    return this.init.debug;
  }
  /** Aborted when nobody is listening any more: the client left and no follower came within the grace period. */
  get signal() {
    return this.abort.signal;
  }

  static async start<E extends EventMap = EventMap>(init: RunInit): Promise<Run<E>> {
    const claimed = await Run.claim<E>(init);
    if (!claimed)
      throw new AppError("conflict", "Этот Idempotency-Key уже занят другим запросом.", {
        reason: "idempotency_key_in_use",
      });
    return claimed.run;
  }

  /** Like `start`, but null when `init.claim`'s key belongs to another request's run. */
  static async claim<E extends EventMap = EventMap, S = unknown>(init: RunInit<S>): Promise<Claimed<E, S> | null> {
    const run = new Run<E>(init);
    // On a server, committed asynchronously: visible to followers at once, durable with the turn's own commit.
    const row = {
      id: run.id,
      conversationId: init.conversationId,
      tenantId: init.tenantId,
      kind: init.kind,
      owner: init.owner,
    };
    const asyncCommit = !!init.asyncCommits;
    const started = await startRow(init, row, asyncCommit);
    if (!started) return null;
    run.timing.claimed = performance.now();
    init.hub.open(run.id);
    run.flusher = flusherFor(init.sql, !!init.asyncCommits, !!init.notifyFollowers);
    run.flusher.add(run);
    return { run, ...started };
  }

  /** The bounds of the run's writes (RunInit.deadlines); zero: unbounded. */
  get deadlines(): RunDeadlines {
    return this.init.deadlines ?? { commitMs: 0, closeMs: 0 };
  }

  /**
   * `complete` in a transaction of its own, bounded by the commit deadline: past it the caller
   * gets StorageDeadlineError (`storage_unavailable`) and the transaction rolls back whenever
   * the database answers. Returns what to publish once committed.
   */
  commit(closing: RunEvent<E>[], o: Outcome = {}): Promise<() => void> {
    return beginWithin(this.init.sql, this.deadlines.commitMs, "turn commit", (tx) => this.complete(tx, closing, o));
  }

  /** Where emitted events also go from now on: the SSE writer of the request, once its stream is open. */
  attach(sink: (e: RunEventRow) => void): void {
    this.init.sink = sink;
  }

  /** Sends an event now; it is stored by the next flush or the final commit. */
  emit<K extends keyof E & string>(event: K, data: E[K]): void {
    if (this.ended) throw new Error(`run ${this.id} already ended; cannot emit ${event}`);
    if (this.completing) throw new Error(`run ${this.id} is being completed; cannot emit ${event}`);
    // Ids past the bound belong to a recovery's ending (storage/runs.ts failAbandonedRuns);
    // the margin leaves room for the closing events of `complete` / `fail`.
    if (this.seq >= MAX_RUN_EVENTS - 16) throw new Error(`run ${this.id} exceeded ${MAX_RUN_EVENTS} events`);
    if (event === "token" && Number.isNaN(this.timing.firstToken)) this.timing.firstToken = performance.now();
    this.publish(this.next(event, data));
  }

  private next(event: string, data: unknown): RunEventRow {
    const e = { seq: ++this.seq, event, data: data ?? {} };
    this.all.push(e);
    return e;
  }

  private publish(e: RunEventRow) {
    this.init.sink?.(e);
    this.init.hub.publish(this.id, e);
  }

  /**
   * The client that started the run went away. A client may reconnect with Last-Event-ID
   * (here or on another process), so the run goes on for a grace period and for as long
   * as someone follows it; otherwise its work stops.
   */
  detach(): void {
    if (this.ended || this.detachedAt !== null) return;
    this.detachedAt = Date.now();
    if ((this.init.detachGraceMs ?? 0) <= 0) return this.abort.abort();
    this.watchdog = setInterval(() => void this.checkFollowed(), 250);
    this.watchdog.unref();
  }

  /** Stops the run's work (a server shutting down): the turn fails before its commit, as on a client that left. */
  cancel(): void {
    if (!this.ended) this.abort.abort();
  }

  private async checkFollowed(): Promise<void> {
    if (this.detachedAt === null || this.ended || this.abort.signal.aborted) return;
    if (this.init.hub.followers(this.id) > 0) return;
    const followed = await heartbeatRun(this.init.sql, this.id, 1_000).catch(() => false);
    if (!followed && Date.now() - this.detachedAt >= (this.init.detachGraceMs ?? 0)) this.abort.abort();
  }

  /** Flushable: the events the database does not have yet. */
  pending(): RunEventRow[] {
    return this.ended ? [] : this.all.slice(this.stored);
  }

  markStored(seq: number): void {
    this.stored = Math.max(this.stored, seq);
  }

  /** Stores the events so far now (the background flush does this every 250 ms anyway). */
  flush(): Promise<void> {
    return this.flusher?.flush() ?? Promise.resolve();
  }

  private stop() {
    this.flusher?.remove(this);
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  /**
   * Inside the turn's transaction: store the events not yet stored, the closing events
   * and `done`, and mark the run completed. Returns what to publish once committed —
   * `final` must not reach a client before the turn it reports is durable.
   */
  async complete(tx: Tx, closing: RunEvent<E>[], o: Outcome = {}): Promise<() => void> {
    const c = this.completion(closing, o);
    const closed = await closeRun(tx, this.id, c.events, c.close, {
      notify: c.notify,
      conversationId: this.conversationId,
    });
    if (!closed) throw runClosed(this.id);
    return c.publish;
  }

  /**
   * What `complete` writes, for a caller that writes it itself (the turn's single commit
   * statement, storage/turn-commit.ts): the events to store, how the run ends, and what to
   * publish once that committed. If it does not commit, the run goes on as before.
   */
  completion(
    closing: RunEvent<E>[],
    o: Outcome = {},
  ): { events: RunEventRow[]; close: RunClose; notify: boolean; publish: () => void } {
    this.stop();
    // Not waiting for an in-flight flush here: this runs inside a transaction that holds a
    // pool connection, and the flush may be queued for one (with PGlite's single connection,
    // always) — a deadlock. Everything not known to be stored is written again instead;
    // rows the flush got in first are skipped by the (run_id, seq) key.
    //
    // The closing events are numbered but not taken into the run until the commit: if the
    // transaction rolls back (a stale snapshot, a failed write), the run goes on from where
    // it was and `fail` numbers its `error` right after the last event a client saw — a gap
    // in the ids would stall a follower resuming with Last-Event-ID.
    let seq = this.seq;
    const tail: RunEventRow[] = [...closing, { event: "done", data: {} }].map((c) => ({
      seq: ++seq,
      event: c.event,
      data: c.data ?? {},
    }));
    this.completing = true;
    this.timing.commitStart = performance.now();
    return {
      events: [...this.all.slice(this.stored), ...tail],
      close: {
        status: o.errorCode ? "failed" : "completed",
        outcome: o.outcome ?? "answered",
        reasonCodes: o.reasonCodes ?? [],
        errorCode: o.errorCode ?? null,
      },
      notify: !!this.init.notifyFollowers,
      publish: () => {
        this.timing.committed = performance.now();
        this.result = o.errorCode
          ? { status: "failed", outcome: o.outcome ?? "answered", errorCode: o.errorCode }
          : { status: "completed", outcome: o.outcome ?? "answered" };
        this.completing = false;
        this.all.push(...tail);
        this.seq = this.stored = seq;
        this.ended = true;
        for (const e of tail) this.publish(e);
        localWake(this.init.sql, this.id);
      },
    };
  }

  /**
   * A `completion` whose commit did not happen and that the turn applies again (driver/turn.ts
   * `reapply`): the run goes on as before it — events may be emitted and are flushed again.
   */
  reopen(): void {
    if (this.ended || !this.completing) return;
    this.completing = false;
    this.flusher?.add(this);
  }

  /**
   * The request was refused before the run's stream opened (an invalid or stale clarification
   * answer): as if the run never started — no row, no events, its Idempotency-Key free again —
   * so a refused request changes nothing.
   */
  async discard(): Promise<void> {
    if (this.ended) return;
    this.stop();
    this.ended = true;
    this.init.hub.forget(this.id);
    await deleteRun(this.init.sql, this.id);
  }

  /** Ends the run as failed in one statement of its own: `error` then `done`, stored and sent. */
  async fail(code: ErrorCode, message: string, o: Outcome = {}): Promise<void> {
    if (this.ended) return;
    this.completing = false;
    this.stop();
    const tail = [this.next("error", { code, message }), this.next("done", {})];
    this.ended = true;
    this.result = { status: "failed", outcome: o.outcome ?? "failed", errorCode: code };
    try {
      // Bounded: with the database away the client still gets its `error` + `done` now; the row
      // stays `running` until a sweep (any process's, this one's included) closes it as stale.
      await withinDeadline(
        this.deadlines.closeMs,
        "run close",
        closeRun(
          this.init.sql,
          this.id,
          this.all.slice(this.stored),
          { status: "failed", errorCode: code, outcome: o.outcome ?? "failed", reasonCodes: o.reasonCodes ?? [code] },
          { notify: this.init.notifyFollowers, conversationId: this.conversationId },
        ),
      );
      this.stored = this.seq;
    } finally {
      for (const e of tail) this.publish(e);
      localWake(this.init.sql, this.id);
    }
  }

  /** Events emitted so far (the SSE id of the last one). */
  get eventCount() {
    return this.seq;
  }
}

/**
 * Another process declared the run's process dead (no heartbeat for too long) and failed the
 * run; its followers were told so. Committing the turn would contradict that: it is refused.
 */
export function runClosed(runId: string): AppError {
  return new AppError("conflict", "Ход прерван: сервер счёл его зависшим и закрыл. Отправьте сообщение ещё раз.", {
    reason: "run_closed",
    runId,
  });
}
