import type { Database } from "../storage/db";
import { listenRunEvents } from "../storage/runs";

/** Between reads of a run followed from another process, when nothing announces new events. */
export const POLL_MS = 150;
/**
 * With LISTEN working, a read happens when the owner announces stored events; this is only the
 * fallback for a missed notification. It stays well inside the owner's "followed within 1 s"
 * check (driver/run.ts), since each read marks the run as followed.
 */
export const LISTENING_FALLBACK_MS = 500;
/** After LISTEN failed (e.g. the server refused the extra connection), polling until a retry. */
const RETRY_LISTEN_MS = 30_000;

export interface Armed {
  /** Resolves when the run is announced after `arm` ("announced"), or after the fallback interval ("timeout"). */
  wait(): Promise<"announced" | "timeout">;
}

/**
 * Wakes followers of runs served by other processes (DESIGN: live fan-out between processes
 * uses LISTEN/NOTIFY). One LISTEN connection per process, opened on the first remote follower;
 * the owning process's background flush and its commit announce runs that a follower marked
 * (storage/runs.ts). On PGlite — one process, and LISTEN does not cross its socket — and while
 * LISTEN is unavailable, followers poll every POLL_MS as before.
 */
export class RunWaker {
  private waiters = new Map<string, Set<(why?: "announced") => void>>();
  private listening: Promise<boolean> | null = null;
  private failedAt = 0;
  private unlisten: (() => Promise<void>) | null = null;
  private closed = false;
  /** Told of every run announced, here or (LISTEN) by another process: the inspector bridge. */
  private anyRun = new Set<(runId: string) => void>();
  /** Announcements received (for tests and debugging). */
  notifications = 0;

  constructor(private readonly db: Database) {}

  /**
   * Registers interest before the caller reads, so an announcement that arrives while it
   * reads is not lost; then `wait()` after the read.
   */
  arm(runId: string): Armed {
    const ready = this.listen();
    let fired: "announced" | "timeout" | null = null;
    let resolveFired!: (why: "announced" | "timeout") => void;
    const firedP = new Promise<"announced" | "timeout">((r) => (resolveFired = r));
    const fire = (why: "announced" | "timeout" = "announced") => {
      if (fired) return;
      fired = why;
      const set = this.waiters.get(runId);
      set?.delete(fire);
      if (set?.size === 0) this.waiters.delete(runId);
      resolveFired(why);
    };
    let set = this.waiters.get(runId);
    if (!set) this.waiters.set(runId, (set = new Set()));
    set.add(fire);
    return {
      wait: async () => {
        const listening = await ready;
        if (fired) return fired;
        const t = setTimeout(() => fire("timeout"), listening ? LISTENING_FALLBACK_MS : POLL_MS);
        const why = await firedP;
        clearTimeout(t);
        return why;
      },
    };
  }

  private listen(): Promise<boolean> {
    if (this.db.backend !== "postgres" || this.closed) return Promise.resolve(false);
    if (!this.listening && Date.now() - this.failedAt >= RETRY_LISTEN_MS) {
      this.listening = listenRunEvents(this.db.sql, (runId) => this.wake(runId)).then(
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

  private wake(runId: string): void {
    this.notifications++;
    this.poke(runId);
    // A thread's key (storage/thread-events.ts) shares the channel; only runs go to run listeners.
    if (!runId.startsWith("thread:")) this.announce(runId);
  }

  /**
   * Wakes this process's waiters of `key` (a run id, or a thread's key) now: a write committed
   * here, which LISTEN would announce only on a PostgreSQL server and a round trip later.
   */
  poke(key: string): void {
    for (const fire of [...(this.waiters.get(key) ?? [])]) fire("announced");
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

  /** A run of this process has ended and its turn is committed (or rolled back). */
  announce(runId: string): void {
    for (const fn of [...this.anyRun]) fn(runId);
  }

  async close(): Promise<void> {
    this.closed = true;
    // LISTEN's connection may still be connecting to a database that is away: not waited out.
    await Promise.race([this.listening, new Promise((r) => setTimeout(r, 2_000).unref())]);
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
  }
}
