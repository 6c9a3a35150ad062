/**
 * `Retry-After` (RFC 9110 §10.2.3, in seconds) on every answer that means "not now, the same
 * request later": a 503 (the server drains on SIGTERM, the database is unavailable) and a 409
 * `conversation_busy` (the conversation's previous turn is still running). Integrators' HTTP
 * clients and proxies read the header, not the Russian message that says «повторите через
 * несколько секунд». One small function so every error path (http/errors.ts) and every route
 * with its own 503 (/readyz) say the same; another error code that means "retry later" is one
 * more line here.
 */
import { errorStatus } from "../driver/errors";

export const RETRY_AFTER = "retry-after";

/** Seconds to wait, per error code (and the 409's reason); undefined: retrying as is will not help. */
export function retryAfterSeconds(code: string, details?: unknown): number | undefined {
  switch (code) {
    // A draining process finishes its turns within SHUTDOWN_GRACE_MS; a load balancer has by then
    // moved the client to another process, so a short wait suffices.
    case "unavailable":
      return 5;
    // A database that is down or full is not back in a second.
    case "storage_unavailable":
      return 10;
    case "conflict":
      // A turn takes seconds; the next message can go when it is done.
      return (details as { reason?: unknown } | undefined)?.reason === "conversation_busy" ? 2 : undefined;
    default:
      // Any other 503 (a model down after its retry, a code added later) is "later" too.
      return (errorStatus as Record<string, number>)[code] === 503 ? 5 : undefined;
  }
}

/** The header for a code, or none: `{...retryAfterHeader(code, details)}` spreads into a headers object. */
export function retryAfterHeader(code: string, details?: unknown): Record<string, string> {
  const s = retryAfterSeconds(code, details);
  return s === undefined ? {} : { [RETRY_AFTER]: String(s) };
}
