import type { Run } from "../driver/run";

/**
 * The turns this process is running, for a graceful shutdown (issue 17 item 4): on SIGTERM the
 * server stops taking requests, waits for these to finish within the grace period, then stops
 * the rest. A stopped turn fails through its ordinary path — `error` then `done`, its
 * transaction never begun or rolled back — so nothing half-done is committed.
 */
export class ActiveTurns {
  private turns = new Map<Run, Promise<void>>();
  private stoppedRuns = new WeakSet<Run>();
  private idle: (() => void)[] = [];
  /** Set once shutdown begins: new turns are refused. */
  draining = false;

  /** Tracks `run` until `finished` settles. */
  track(run: Run, finished: Promise<unknown>): void {
    const p = finished.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(run, p);
    void p.then(() => {
      this.turns.delete(run);
      if (this.turns.size === 0) for (const f of this.idle.splice(0)) f();
    });
  }

  get size(): number {
    return this.turns.size;
  }

  /** True when `run` was stopped by the shutdown (its failure message says so). */
  stoppedByShutdown(run: Run): boolean {
    return this.stoppedRuns.has(run);
  }

  private settled(ms: number): Promise<boolean> {
    if (this.turns.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), ms);
      this.idle.push(() => (clearTimeout(t), resolve(true)));
    });
  }

  /**
   * Waits up to `graceMs` for the running turns, then aborts the rest and waits up to
   * `abortMs` for them to record their failure. Returns how many finished and how many were stopped.
   */
  async drain(graceMs: number, abortMs = 5_000): Promise<{ finished: number; stopped: number }> {
    this.draining = true;
    const before = this.turns.size;
    if (await this.settled(graceMs)) return { finished: before, stopped: 0 };
    const rest = [...this.turns.keys()];
    for (const run of rest) {
      this.stoppedRuns.add(run);
      run.cancel();
    }
    await this.settled(abortMs);
    return { finished: before - rest.length, stopped: rest.length };
  }
}
