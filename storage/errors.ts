/** A write that lost an optimistic-lock race: the row moved on since it was read. */
export class StaleVersionError extends Error {
  constructor(
    readonly what: string,
    readonly expected: number | null,
  ) {
    super(`${what} was changed by another writer (expected version ${expected ?? "none"})`);
  }
}

/**
 * PostgreSQL's class 22, "data exception": a value the database cannot take as given — a NUL
 * byte in text, "x" where an integer goes, a number out of range. Always the request's value,
 * so the HTTP edge answers it as invalid input, not as a server failure.
 */
export function isDataException(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && e.name === "PostgresError" && typeof code === "string" && code.startsWith("22");
}

/**
 * A wait on the database that passed its deadline (a turn's commit, a run's close, a sweep):
 * the caller stops waiting and answers `storage_unavailable`. What was sent may still be
 * executed if the database got it; a queued statement is cancelled first (storage/deadline.ts).
 */
export class StorageDeadlineError extends Error {
  readonly code = "STORAGE_DEADLINE";
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what}: the database did not answer within ${ms} ms`);
  }
}

/** postgres.js's and Node's codes for a connection that is gone or never came. */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "STORAGE_DEADLINE",
]);

/**
 * The database cannot take the request now, through no fault of the request: its connection is
 * gone or refused, it did not answer in time, or it reports a resource or system failure —
 * SQLSTATE class 08 (connection exception), 53 (insufficient resources: 53100 disk full,
 * 53200 out of memory, 53300 too many connections), 58 (system error: an I/O error writing a
 * file, e.g. on a full disk), 57P01–57P03 (shutting down, starting up), 25006 (a read-only
 * server: a replica after a failover). Retrying later may succeed: the HTTP edge answers
 * `503 storage_unavailable` with Retry-After, never `500 internal`.
 */
export function isStorageUnavailable(e: unknown): boolean {
  if (!e || typeof e !== "object") return false;
  if (e instanceof StorageDeadlineError) return true;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") {
    if (CONNECTION_CODES.has(code)) return true;
    if (/^(08|53|58)[0-9A-Z]{3}$/.test(code)) return true;
    if (code === "57P01" || code === "57P02" || code === "57P03" || code === "25006") return true;
  }
  // Embedded PGlite reports a file it cannot write with the operating system's words.
  const message = (e as { message?: unknown }).message;
  if (typeof message === "string" && /no space left on device|ENOSPC|disk quota exceeded/i.test(message)) return true;
  const cause = (e as { cause?: unknown }).cause;
  return cause !== undefined && cause !== e && isStorageUnavailable(cause);
}
