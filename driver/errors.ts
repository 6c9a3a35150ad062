/** Error codes of CONTRACT §6; extend, don't rename. */
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
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** The one error type features throw; the HTTP edge maps it to `{error: {code, message}}`. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = errorStatus[code];
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
