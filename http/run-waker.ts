import type { Database } from "../storage/db";
import { localWake, onLocalWake } from "../storage/local-wake";
import { listenRunEvents, markFollowedRuns } from "../storage/runs";

/** Between reads of a run or thread followed while LISTEN is unavailable on a PostgreSQL server. */
export const POLL_MS = 150;
/**
 * A run followed from this process is marked as followed (one statement for all of them) this
 * often: its owner keeps a detached run going while it is marked within the last second
 * (driver/run.ts), and announces its events only for runs marked recently (storage/runs.ts).
 */
export const MARK_FOLLOWED_MS = 500;
/** After LISTEN failed (e.g. the server refused the extra connection), polling until a retry. */
const RETRY_LISTEN_MS = 30_000;

export type Wake = "announced" | "timeout" | "reconnected" | "aborted";

export interface Armed {
  /**
   * Resolves when the key is announced after `arm` ("announced"); when LISTEN's connection came
   * back ("reconnected": a notification may have been missed, read again); when `signal` aborts
   * ("aborted"); and only while LISTEN is unavailable on a server, after POLL_MS ("timeout").
   */
  wait(signal?: AbortSignal): Promise<Wake>;
}

/**
 * Wakes followers of runs and threads (DESIGN: live fan-out between processes uses LISTEN/NOTIFY).
 * Issue 47: followers cost nothing while nothing happens — no timer re-reads.
 *
 * - PostgreSQL server: one LISTEN connection per process, opened on the first follower; a
 *   notification wakes the followers of its key in memory. A follower reads again only after a
 *   notification, or after LISTEN's connection was re-established (postgres.js re-listens on
 *   reconnect and says so: anything sent meanwhile was missed). Only while LISTEN is unavailable
 *   do followers poll every POLL_MS.
 * - Embedded PGlite: one process owns the database, so every write is this process's own and
 *   wakes its followers in memory (`poke`, storage/local-wake.ts: a run's flush, commit and
 *   failure, a thread's event, an erasure); nothing is polled.
 *
 * The one statement that remains while runs of other processes are followed: their `followed_at`
 * mark, for all of them at once every MARK_FOLLOWED_MS — none when nobody follows such a run.
 */
export class RunWaker {
  private waiters = new Map<string, Set<(why: Wake) => void>>();
  private listening: Promise<boolean> | null = null;
  private listened = false;
  private failedAt = 0;
  private unlisten: (() => Promise<void>) | null = null;
  private closed = false;
  /** Told of every run announced, here or (LISTEN) by another process: the inspector bridge. */
  private anyRun = new Set<(runId: string) => void>();
  /** Payloads of the channel by prefix that are not wake-ups (the operators' presence, http/presence.ts). */
  private prefixed = new Map<string, (payload: string) => void>();
  /** Runs of other processes followed from here, with how many followers each. */
  private followed = new Map<string, number>();
  private marker: NodeJS.Timeout | null = null;
  /** Announcements received (for tests and debugging). */
  notifications = 0;

  private offLocal: () => void;

  constructor(private readonly db: Database) {
    // Writes of this process (any server sharing this pool) wake their followers at once.
    this.offLocal = onLocalWake(db.sql, (key) => this.fire(key));
  }

  private fire(key: string): void {
    for (const fire of [...(this.waiters.get(key) ?? [])]) fire("announced");
  }

  /**
   * Registers interest before the caller reads, so an announcement that arrives while it
   * reads is not lost; then `wait()` after the read.
   */
  arm(key: string): Armed {
    const ready = this.listen();
    let fired: Wake | null = null;
    let resolveFired!: (why: Wake) => void;
    const firedP = new Promise<Wake>((r) => (resolveFired = r));
    const fire = (why: Wake) => {
      if (fired) return;
      fired = why;
      const set = this.waiters.get(key);
      set?.delete(fire);
      if (set?.size === 0) this.waiters.delete(key);
      resolveFired(why);
    };
    let set = this.waiters.get(key);
    if (!set) this.waiters.set(key, (set = new Set()));
    set.add(fire);
    return {
      wait: async (signal) => {
        const listening = await ready;
        if (fired) return fired;
        if (signal?.aborted) fire("aborted");
        const onAbort = () => fire("aborted");
        signal?.addEventListener("abort", onAbort, { once: true });
        // Polling only on a server whose LISTEN is unavailable; otherwise wait for news.
        const poll = !listening && this.db.backend === "postgres" ? setTimeout(() => fire("timeout"), POLL_MS) : null;
        if (this.closed) fire("aborted");
        const why = await firedP;
        if (poll) clearTimeout(poll);
        signal?.removeEventListener("abort", onAbort);
        return why;
      },
    };
  }

  /** A run of another process is followed from here until the returned function is called. */
  follow(runId: string): () => void {
    this.followed.set(runId, (this.followed.get(runId) ?? 0) + 1);
    if (!this.marker && this.db.backend === "postgres") {
      this.marker = setInterval(() => void this.markFollowed(), MARK_FOLLOWED_MS);
      this.marker.unref();
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.followed.get(runId) ?? 1) - 1;
      if (n > 0) this.followed.set(runId, n);
      else this.followed.delete(runId);
      if (this.followed.size === 0 && this.marker) {
        clearInterval(this.marker);
        this.marker = null;
      }
    };
  }

  private marking = false;
  private async markFollowed(): Promise<void> {
    if (this.marking || this.followed.size === 0) return;
    this.marking = true;
    try {
      await markFollowedRuns(this.db.sql, [...this.followed.keys()]);
    } catch {
      // The database is away: the next mark, or the owner's stale check, settles it.
    } finally {
      this.marking = false;
    }
  }

  private listen(): Promise<boolean> {
    if (this.db.backend !== "postgres" || this.closed) return Promise.resolve(false);
    if (!this.listening && Date.now() - this.failedAt >= RETRY_LISTEN_MS) {
      this.listening = listenRunEvents(
        this.db.sql,
        (key) => this.wake(key),
        () => this.listenedAgain(),
      ).then(
        (unlisten) => {
          this.unlisten = unlisten;
          return true;
        },
        () => {
          this.failedAt = Date.now();
          this.listening = null;
          return false;
        },
      );
    }
    return this.listening ?? Promise.resolve(false);
  }

  /** LISTEN is (again) in place: after the first time, its connection was lost and a notification may be too. */
  private listenedAgain(): void {
    if (!this.listened) {
      this.listened = true;
      return;
    }
    for (const set of [...this.waiters.values()]) for (const fire of [...set]) fire("reconnected");
    for (const fn of [...this.anyRun]) for (const runId of this.followed.keys()) fn(runId);
  }

  private wake(key: string): void {
    this.notifications++;
    for (const [prefix, fn] of this.prefixed) if (key.startsWith(prefix)) return fn(key);
    this.fire(key);
    // A thread's key (storage/thread-events.ts) shares the channel; only runs go to run listeners.
    if (!key.startsWith("thread:")) this.announce(key);
  }

  /**
   * Wakes this process's waiters of `key` (a run id, or a thread's key) now: a write committed
   * here, which LISTEN would announce only on a PostgreSQL server and a round trip later.
   */
  poke(key: string): void {
    localWake(this.db.sql, key);
  }

  /** How many followers wait now (for tests and the bench). */
  get waiting(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }

  /**
   * Calls `fn` for every run announced from now on: a run of this process when it ends
   * (`announce`, http/sse.ts), and runs of other processes that LISTEN hears of.
   */
  onAnyRun(fn: (runId: string) => void): () => void {
    void this.listen();
    this.anyRun.add(fn);
    return () => this.anyRun.delete(fn);
  }

  /**
   * Hands every payload of the shared channel that starts with `prefix` to `fn` (and to no
   * waiter): ephemeral news other processes publish on the same LISTEN connection live events
   * use, e.g. an operator's presence. Starts listening on a PostgreSQL server.
   */
  onPrefixed(prefix: string, fn: (payload: string) => void): () => void {
    this.prefixed.set(prefix, fn);
    void this.listen();
    return () => this.prefixed.delete(prefix);
  }

  /** A run of this process has ended and its turn is committed (or rolled back). */
  announce(runId: string): void {
    for (const fn of [...this.anyRun]) fn(runId);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.offLocal();
    if (this.marker) clearInterval(this.marker);
    this.marker = null;
    // Followers still waiting end their loops (their streams are closed by the shutdown).
    for (const set of [...this.waiters.values()]) for (const fire of [...set]) fire("aborted");
    // LISTEN's connection may still be connecting to a database that is away: not waited out.
    await Promise.race([this.listening, new Promise((r) => setTimeout(r, 2_000).unref())]);
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
  }
}
