import { randomUUID } from "node:crypto";
import type { Context, Hono, MiddlewareHandler, Next } from "hono";
import type { AuthEnv } from "../auth";
import type { Deps } from "../deps";
import { logger, requestLogContext, withIds, type LogContext } from "./logger";
import { metrics, registry } from "./metrics";
import { gatherRequest } from "./turn-line";
import { retryAfterHeader } from "../retry-after";

/**
 * One log line per request (method, route, status, latency, ids) — for a streamed turn, on the
 * turn's line (turn-line.ts) — and its count in
 * ds_http_requests_total. The request id is the caller's X-Request-Id when it sent a sane one,
 * else a new one; it is echoed back in the response header.
 */
export function requestLog(): MiddlewareHandler<AuthEnv> {
  return (c, next) => {
    const given = c.req.header("x-request-id");
    const requestId = given && /^[A-Za-z0-9._:-]{1,80}$/.test(given) ? given : randomUUID();
    const ctx: LogContext = { requestId };
    c.set("log", ctx);
    return logged(c, next, ctx);
  };
}

async function logged(c: Context<AuthEnv>, next: Next, ctx: LogContext): Promise<void> {
  const started = performance.now();
  c.header("x-request-id", ctx.requestId as string);
  try {
    await next();
  } finally {
    const route = c.req.routePath || c.req.path;
    const status = c.res.status;
    metrics.httpRequests.inc({ method: c.req.method, route, status: String(status) });
    if (route !== "/metrics" && route !== "/healthz" && route !== "/readyz") {
      const request = {
        method: c.req.method,
        route,
        path: c.req.path,
        status,
        latencyMs: Math.round(performance.now() - started),
        role: c.get("role"),
      };
      if (!gatherRequest(ctx, request)) logger.info(withIds(ctx, { event: "request", ...request }), "request");
    }
  }
}

/** Database reachable (one round trip), with its latency; also feeds the db gauges. */
export async function pingDatabase(
  deps: Pick<Deps, "db">,
  timeoutMs = 2_000,
): Promise<{ ok: boolean; ms: number; error?: string }> {
  const started = performance.now();
  try {
    await Promise.race([
      deps.db.sql`select 1`,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs).unref(),
      ),
    ]);
    const ms = performance.now() - started;
    metrics.dbUp.set(1);
    metrics.dbPingSeconds.set(ms / 1000);
    return { ok: true, ms };
  } catch (e) {
    metrics.dbUp.set(0);
    return { ok: false, ms: performance.now() - started, error: (e as Error).message };
  }
}

/**
 * GET /readyz: 200 when the database answers and the process is not shutting down, else 503
 * (a load balancer stops sending traffic). /healthz stays a liveness check of the process.
 * GET /metrics: Prometheus text format. Both outside /v1: no token, as scrapers and probes expect;
 * they carry counts and latencies only, no ids or text.
 */
export function registerObservabilityRoutes(app: Hono<AuthEnv>, deps: Deps): void {
  app.get("/readyz", async (c) => {
    if (deps.turns.draining)
      return c.json({ status: "stopping", database: "unchecked" }, 503, retryAfterHeader("unavailable"));
    const db = await pingDatabase(deps);
    if (!db.ok) {
      logger.warn(
        withIds(requestLogContext(c), { event: "readiness_failed", error: db.error }),
        "database not reachable",
      );
      return c.json({ status: "unavailable", database: "unreachable" }, 503, retryAfterHeader("storage_unavailable"));
    }
    return c.json({ status: "ready", database: "ok", latencyMs: Math.round(db.ms) });
  });
  app.get("/metrics", async (c) => {
    await pingDatabase(deps);
    const sql = deps.db.sql as unknown as { options?: { max?: number } };
    metrics.dbPoolMax.set({ backend: deps.db.backend }, sql.options?.max ?? 0);
    if (deps.db.backend === "postgres") {
      metrics.dbConnections.reset();
      const rows = await deps.db.sql<{ state: string | null; n: number }[]>`
        select state, count(*)::int as n from pg_stat_activity where application_name = 'dialogue-statecharts' group by state`.catch(
        () => [],
      );
      for (const r of rows) metrics.dbConnections.set({ state: r.state ?? "unknown" }, r.n);
    }
    c.header("content-type", registry.contentType);
    return c.body(await registry.metrics());
  });
}
