import { errorStatus, type ErrorCode } from "../contract/errors";

/** The codes live in the shared contract (contract/errors.ts), importable without server code. */
export { errorStatus, type ErrorCode };

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
