/** The API's error codes and their HTTP statuses (doc/api.md "Errors"); extend, don't rename. */
export const errorStatus = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unknown_candidate: 422,
  payload_too_large: 413,
  model_unavailable: 503,
  /** The server is shutting down (or not ready): retry shortly, elsewhere. */
  unavailable: 503,
  /**
   * The database is down, unreachable, out of disk or did not answer within its deadline:
   * nothing of the request was stored (a turn may be resent with its Idempotency-Key); the
   * response carries Retry-After.
   */
  storage_unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;
