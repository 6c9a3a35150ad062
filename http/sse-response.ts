import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { metrics } from "./observability/metrics";

/** Where an SSE response's text goes. */
export interface SseStream {
  /** Resolves once the text is handed to the socket (or the client is gone). */
  write(text: string): Promise<unknown>;
  onAbort(cb: () => void): void;
}

const HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
  connection: "keep-alive",
} as const;

/**
 * An SSE response written straight to Node's ServerResponse when the app runs under
 * @hono/node-server — Hono's `streamSSE` goes through a TransformStream, a ReadableStream and
 * the adapter's reader loop for every write, a measurable share of a streamed turn's CPU
 * (bench/turn.ts). Elsewhere (app.request in a test, another runtime) it is `streamSSE`.
 */
export function sseResponse(
  c: Context,
  body: (stream: SseStream) => Promise<void>,
  headers: Record<string, string> = {},
): Response {
  const res = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
  if (!res) {
    for (const [k, v] of Object.entries({ ...HEADERS, ...headers })) c.header(k, v);
    return streamSSE(c, body);
  }
  // Written past Hono's headers, so the request id the request-log middleware set goes here too.
  const requestId = (c.get as (k: string) => { requestId?: unknown } | undefined)("log")?.requestId;
  res.writeHead(200, {
    ...HEADERS,
    ...(typeof requestId === "string" ? { "x-request-id": requestId } : {}),
    ...headers,
  });
  // The headers (with X-Run-Id) leave in this turn of the event loop, not with a first event that
  // is slow to come: a client learns the run id at once. An event written in this turn (a turn's
  // run_started) takes them along — one socket write, not two.
  let started = false;
  const flushSoon = setImmediate(() => {
    if (started) return;
    started = true;
    res.flushHeaders();
  });
  const aborts: (() => void)[] = [];
  let gone = false;
  res.on("close", () => {
    // `close` also follows a normal end; only a connection lost before it is an abort.
    if (res.writableFinished) return;
    gone = true;
    for (const cb of aborts.splice(0)) cb();
  });
  const stream: SseStream = {
    write(text) {
      if (!started) {
        started = true;
        clearImmediate(flushSoon);
      }
      if (gone || res.writableEnded) return Promise.resolve();
      metrics.sseWrites.inc();
      if (res.write(text)) return Promise.resolve();
      // Back-pressure: wait for the socket to take it (or go away); how long is measured.
      const waited = performance.now();
      return new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          metrics.sseWriteWaitSeconds.observe((performance.now() - waited) / 1000);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    },
    onAbort(cb) {
      if (gone) cb();
      else aborts.push(cb);
    },
  };
  void body(stream)
    .catch((e) => console.error("SSE response failed:", e))
    .finally(() => {
      if (!res.writableEnded) res.end();
    });
  return RESPONSE_ALREADY_SENT;
}
