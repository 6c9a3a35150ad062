import type { Sql } from "../storage/db";
import { withinDeadline } from "../storage/deadline";
import { localWake } from "../storage/local-wake";
import { flushRunsEvents, type RunEventRow } from "../storage/runs";

/** The longest a background flush is waited for; the next flush or the turn's commit stores what it missed. */
export const FLUSH_DEADLINE_MS = 10_000;

/** What the flusher needs of a live run: its id, the events not yet stored, and word of what got stored. */
export interface Flushable {
  readonly id: string;
  /** The run's conversation: a stored run_started refers to it (storage/runs.ts RUN_STARTED_OF_RUN). */
  readonly conversationId: string;
  pending(): RunEventRow[];
  markStored(seq: number): void;
}

/**
 * Stores the new events of every live run of a process, for followers on other processes,
 * in one statement every 250 ms — not one statement per run: a thousand streaming runs cost
 * four statements a second, not four thousand. A failed flush is not retried: the next one,
 * or the turn's own commit, stores whatever it missed.
 *
 * The timer's flush skips runs added since its previous tick: most turns end within one interval
 * and their commit stores every event anyway, so flushing them wrote each of their events
 * twice (a run_events row, then the commit's tail skipped over it) and heart-beat a row just
 * inserted — at 64 turns in flight, two of three turns paid that (issue 46). An event of a
 * longer run is stored at most two intervals after it was emitted instead of one; its run row
 * is there from the start, so a follower on another process finds the run and waits for them.
 */
export class RunFlusher {
  /**
   * Each live run and the timer tick it was added after. Counted in ticks, not read off a clock:
   * a tick may fire a fraction of a millisecond before a full interval has passed by
   * performance.now(), and a run skipped on that count waited a third interval (seen in CI).
   */
  private runs = new Map<Flushable, number>();
  private ticks = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly asyncCommit: boolean,
    private readonly notify = false,
    private readonly intervalMs = 250,
  ) {}

  add(run: Flushable): void {
    if (!this.runs.has(run)) this.runs.set(run, this.ticks);
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(++this.ticks), this.intervalMs);
    this.timer.unref();
  }

  remove(run: Flushable): void {
    this.runs.delete(run);
    if (this.runs.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Flushes now (one at a time: a flush that is running is returned instead) every run, or on
   * the timer's tick `tick` the runs added before the previous tick.
   */
  flush(tick = Infinity): Promise<void> {
    if (this.flushing) return this.flushing;
    const batch: { run: Flushable; events: RunEventRow[] }[] = [];
    for (const [run, addedAfter] of this.runs) {
      if (addedAfter >= tick - 1) continue;
      const events = run.pending();
      if (events.length > 0) batch.push({ run, events });
    }
    if (batch.length === 0) return Promise.resolve();
    // Bounded: a flush stuck on a database that went away would hold every later one back.
    this.flushing = withinDeadline(
      FLUSH_DEADLINE_MS,
      "run events flush",
      flushRunsEvents(
        this.sql,
        batch.map((b) => ({ runId: b.run.id, conversationId: b.run.conversationId, events: b.events })),
        { asyncCommit: this.asyncCommit, notify: this.notify },
      ),
    )
      .then(
        () => {
          for (const b of batch) {
            b.run.markStored(b.events.at(-1)!.seq);
            localWake(this.sql, b.run.id);
          }
        },
        () => {},
      )
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }
}

const flushers = new WeakMap<Sql, Map<string, RunFlusher>>();

/** The one flusher of a connection pool (per commit and notify mode). */
export function flusherFor(sql: Sql, asyncCommit: boolean, notify = false): RunFlusher {
  let bySql = flushers.get(sql);
  if (!bySql) flushers.set(sql, (bySql = new Map()));
  const key = `${asyncCommit}|${notify}`;
  let f = bySql.get(key);
  if (!f) bySql.set(key, (f = new RunFlusher(sql, asyncCommit, notify)));
  return f;
}
