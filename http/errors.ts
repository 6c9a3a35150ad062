import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import { AppError, errorStatus, type ErrorCode } from "../driver/errors";
import { logger, requestLogContext, withIds } from "./observability/logger";
import { metrics } from "./observability/metrics";
import { isDataException, isStorageUnavailable, StaleVersionError } from "../storage/errors";
import { jsonTooDeep, MAX_JSON_DEPTH } from "./json-depth";
import { retryAfterHeader } from "./retry-after";

import type { ErrorBody } from "./contract";
export type { ErrorBody };

/** The one mapping from anything thrown inside to the contract's error shape (CONTRACT §6). */
export function toAppError(e: unknown): AppError {
  if (e instanceof AppError) return e;
  if (e instanceof StaleVersionError)
    return new AppError("conflict", "Данные уже изменены другим запросом; обновите и повторите.");
  if (isDataException(e))
    return new AppError(
      "invalid_request",
      "Недопустимое значение в запросе (например, нулевой байт в тексте или не число там, где ожидается число).",
    );
  if (isStorageUnavailable(e)) return storageUnavailable();
  if (e instanceof z.ZodError) return new AppError("invalid_request", describeZod(e), e.issues);
  if (e instanceof HTTPException) {
    const code: ErrorCode =
      e.status === 413
        ? "payload_too_large"
        : e.status === 401
          ? "unauthorized"
          : e.status === 404
            ? "not_found"
            : e.status < 500
              ? "invalid_request"
              : "internal";
    return new AppError(code, e.message || code);
  }
  return new AppError("internal", "Внутренняя ошибка сервера. Запрос не выполнен, данные не изменены.");
}

/** The database is down, full or late: a retry later may succeed, nothing of the request was stored. */
export function storageUnavailable(): AppError {
  return new AppError(
    "storage_unavailable",
    "Хранилище временно недоступно (база данных не отвечает или нет места на диске). Запрос не выполнен, данные не изменены — повторите через несколько секунд.",
  );
}

export function describeZod(e: z.ZodError): string {
  return e.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
}

/** The status logged and counted for a request whose client left mid-body (nginx's 499: nobody reads the answer). */
export const CLIENT_ABORTED_STATUS = 499;

/**
 * The client closed the connection before it had sent the whole body: reading the body failed
 * because of the client, not of us. Told by the request as Node received it (its body is
 * incomplete and the stream was destroyed), or by Node's own abort error when the adapter's
 * request is not at hand; a reset of any other socket (the database's) is not this.
 */
export function clientAborted(c: Context, e: unknown): boolean {
  const incoming = (c.env as { incoming?: { complete?: boolean; destroyed?: boolean; aborted?: boolean } } | undefined)
    ?.incoming;
  if (incoming && typeof incoming === "object" && "complete" in incoming)
    return incoming.complete === false && (incoming.destroyed === true || incoming.aborted === true);
  const err = e as { code?: unknown; message?: unknown } | null;
  return err?.code === "ECONNRESET" && err.message === "aborted" && c.req.raw.signal?.aborted === true;
}

export function errorResponse(c: Context, e: unknown): Response {
  if (clientAborted(c, e)) {
    // Not an error of ours, and nobody will read the answer: no 500, no error log or count.
    logger.info(
      withIds(requestLogContext(c), {
        event: "client_aborted",
        method: c.req.method,
        path: c.req.path,
        reason: (e as Error)?.message ?? String(e),
      }),
      "client closed the connection before sending the whole request",
    );
    return c.body(null, CLIENT_ABORTED_STATUS as never);
  }
  const err = toAppError(e);
  if (err.code === "internal")
    logger.error(
      withIds(requestLogContext(c), {
        event: "request_failed",
        err: { message: (e as Error)?.message ?? String(e), stack: (e as Error)?.stack },
      }),
      "internal error",
    );
  metrics.errors.inc({ where: "request", code: err.code });
  const body: ErrorBody = {
    error: {
      code: err.code,
      message: err.message,
      ...(err.details !== undefined && err.code !== "internal" ? { details: err.details } : {}),
    },
  };
  if (err.code === "storage_unavailable") {
    // Logged (an operator must see an outage), but not as a bug: no stack.
    logger.warn(
      withIds(requestLogContext(c), {
        event: "storage_unavailable",
        method: c.req.method,
        path: c.req.path,
        err: { message: (e as Error)?.message ?? String(e), code: (e as { code?: unknown })?.code },
      }),
      "database unavailable",
    );
  }
  return c.json(body, errorStatus[err.code] as never, retryAfterHeader(err.code, err.details));
}

/** Parses the query string against a schema; a mismatch is `invalid_request`. */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw new AppError("invalid_request", describeZod(parsed.error), parsed.error.issues);
  return parsed.data;
}

/** Parses a JSON body against a schema; a missing or malformed body is `invalid_request`. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let raw: unknown;
  const text = await c.req.text();
  if (text.trim() === "") raw = {};
  else {
    if (jsonTooDeep(text))
      throw new AppError("invalid_request", `JSON в теле запроса вложен глубже ${MAX_JSON_DEPTH} уровней.`);
    try {
      raw = JSON.parse(text);
    } catch {
      throw new AppError("invalid_request", "Тело запроса должно быть JSON.");
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new AppError("invalid_request", describeZod(parsed.error), parsed.error.issues);
  return parsed.data;
}
