import { StorageDeadlineError } from "./errors";

/** A statement postgres.js has not settled yet: `cancel()` takes it out of the queue, or asks the server to cancel it. */
interface Cancellable {
  cancel?: () => unknown;
}

/**
 * Waits for `work` at most `ms` (issue 47: a turn's commit waited on a database outage with no
 * bound — postgres.js waits for a connection up to its connect_timeout, then retries). Past the
 * deadline the caller gets StorageDeadlineError and `onLate` runs, and the statement is cancelled:
 * one still waiting in the pool for a connection (an outage) is taken out and never sent; one
 * already handed to a connection — pipelined behind another, or at the server — may still run
 * and commit (measured: postgres.js's cancel does not stop a pipelined statement). A turn's
 * client told `storage_unavailable` then finds it stored when it resends with its
 * Idempotency-Key (the key replays it). A transaction (safe-begin.ts `beginWithin`) rolls back
 * instead. `ms` ≤ 0: no bound.
 */
export async function withinDeadline<T>(
  ms: number,
  what: string,
  work: PromiseLike<T> & Cancellable,
  onLate?: () => void,
): Promise<T> {
  if (!(ms > 0)) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      try {
        onLate?.();
        void Promise.resolve(work.cancel?.()).catch(() => {});
      } catch {
        // cancelling is best effort
      }
      reject(new StorageDeadlineError(what, ms));
    }, ms);
  });
  // The work's own later failure must not surface as an unhandled rejection once the deadline won.
  Promise.resolve(work).then(undefined, () => {});
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
