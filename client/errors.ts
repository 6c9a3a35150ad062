import type { ErrorBody } from "../contract/http";

/**
 * Errors the client throws, one class per thing a caller handles differently. Every HTTP error
 * of the API (doc/api.md "Errors": `{"error": {code, message, details?}}`) is an ApiError; the
 * subclasses name the codes and reasons a caller usually branches on.
 */
export class ClientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The server could not be reached (refused, reset, DNS) — after the client's retries. */
export class ConnectionError extends ClientError {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(`Сервер недоступен (${url}): ${describeCause(cause)}`, { cause });
  }
}

/** An HTTP error answer of the API. */
export class ApiError extends ClientError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
  /** `details.reason`, when the server gave one (e.g. `conversation_busy`). */
  get reason(): string | undefined {
    const d = this.details as { reason?: unknown } | undefined;
    return typeof d?.reason === "string" ? d.reason : undefined;
  }
}

export class NotFoundError extends ApiError {}
export class UnauthorizedError extends ApiError {}
export class InvalidRequestError extends ApiError {}
/** 409 in general: a stale plan version, an answered clarification, a conflicting write. */
export class ConflictError extends ApiError {}
/** 409 `conversation_busy`: another message of this conversation is still being answered (policy `reject`). */
export class ConversationBusyError extends ConflictError {
  get runId(): string | undefined {
    return (this.details as { runId?: string } | undefined)?.runId;
  }
}
/** 409 `idempotency_key_reused`: the key was used before for a different request. */
export class IdempotencyKeyReusedError extends ConflictError {}
export class UnknownCandidateError extends ApiError {}
export class ModelUnavailableError extends ApiError {}
/** 503 storage_unavailable: the server's database is down or full; nothing was stored — retry after a while. */
export class StorageUnavailableError extends ApiError {}

/** The run ended with the server's `error` event (not a dropped connection: that is retried). */
export class RunFailedError extends ClientError {
  constructor(
    readonly runId: string | null,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The stream kept breaking: no progress after the client's retries. */
export class StreamInterruptedError extends ClientError {
  constructor(
    readonly runId: string | null,
    readonly lastEventId: number,
    cause: unknown,
  ) {
    super(
      `Поток ответа прервался и не восстановился (run ${runId ?? "неизвестен"}, последнее событие ${lastEventId}): ${describeCause(cause)}`,
      { cause },
    );
  }
}

/** The error class for an API error body. */
export function apiError(status: number, body: unknown): ApiError {
  // Partial: a proxy or a crashed server may answer with something else than the API's error body.
  const e: Partial<ErrorBody["error"]> = (body as Partial<ErrorBody> | null)?.error ?? {};
  const code = e.code ?? (status >= 500 ? "internal" : "invalid_request");
  const message = e.message ?? `HTTP ${status}`;
  const reason = (e.details as { reason?: string } | undefined)?.reason;
  const Cls =
    status === 404
      ? NotFoundError
      : status === 401
        ? UnauthorizedError
        : code === "conflict" && reason === "conversation_busy"
          ? ConversationBusyError
          : code === "conflict" && reason === "idempotency_key_reused"
            ? IdempotencyKeyReusedError
            : status === 409
              ? ConflictError
              : code === "unknown_candidate"
                ? UnknownCandidateError
                : code === "model_unavailable"
                  ? ModelUnavailableError
                  : code === "storage_unavailable"
                    ? StorageUnavailableError
                    : status === 400
                      ? InvalidRequestError
                      : ApiError;
  return new Cls(status, code, message, e.details);
}

function describeCause(cause: unknown): string {
  const c = cause as { code?: string; message?: string; cause?: { code?: string; message?: string } } | undefined;
  const code = c?.cause?.code ?? c?.code;
  if (code === "ECONNREFUSED") return "соединение отклонено — сервер не запущен?";
  if (code === "ENOTFOUND") return "адрес не найден";
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") return "соединение разорвано";
  return c?.cause?.message ?? c?.message ?? String(cause);
}
