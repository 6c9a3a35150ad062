import { StorageDeadlineError } from "./errors";

/** A statement postgres.js has not settled yet: `cancel()` takes it out of the queue, or asks the server to cancel it. */
interface Cancellable {
  cancel?: () => unknown;
}

/**
 * Waits for `work` at most `ms` (issue 47: a turn's commit waited on a database outage with no
 * bound — postgres.js waits for a connection up to its connect_timeout, then retries). Past the
 * deadline the caller gets StorageDeadlineError and `onLate` runs: a statement still queued for
 * a connection is cancelled there, so it is not sent once the database returns — a turn that its
 * client was told failed is not stored later. (A statement the server already got may still
 * commit; its Idempotency-Key then replays it.) `ms` ≤ 0: no bound.
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
