import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { AppError } from "../../driver/errors";
import { failAbandonedRuns, getRun, listRunEvents, markFollowed, type RunEventRow } from "../../storage/runs";
import type { AuthEnv } from "../auth";
import type { Deps } from "../deps";
import { SseWriter } from "../sse";

/** A run silent this long is taken for dead: its process no longer flushes or beats. */
export const STALE_RUN_MS = 15_000;
const POLL_MS = 150;

/**
 * GET /v1/runs/{runId}/events — replays the stored events after Last-Event-ID, then follows
 * the live run: from memory when this process serves it, else by reading what the serving
 * process flushes to the database. Ends after `done`.
 */
export function registerRunRoutes(app: Hono<AuthEnv>, deps: Deps): void {
  app.get("/v1/runs/:runId/events", async (c) => {
    const runId = c.req.param("runId");
    const run = await getRun(deps.db.sql, runId);
    if (!run || run.tenantId !== c.get("tenantId")) throw new AppError("not_found", "Такого запуска нет.");
    const header = c.req.header("last-event-id") ?? c.req.query("lastEventId") ?? "0";
    const after = Number.parseInt(header, 10);
    if (!Number.isFinite(after) || after < 0) throw new AppError("invalid_request", "Last-Event-ID должен быть неотрицательным целым.");
    c.header("cache-control", "no-cache, no-transform");
    return streamSSE(c, async (stream) => {
      const writer = new SseWriter(stream);
      let last = after;
      let finished = false;
      const deliver = (e: RunEventRow) => {
        if (e.seq !== last + 1) return false;
        writer.send(e);
        last = e.seq;
        if (e.event === "done") finished = true;
        return true;
      };
      const live = deps.hub.get(runId);
      if (live) {
        // Same process: memory has every event, stored or not, in order.
        await new Promise<void>((resolve) => {
          const catchUp = () => {
            for (const e of live.events) if (e.seq > last) deliver(e);
            if (finished || writer.isClosed) resolve();
          };
          const unsubscribe = deps.hub.subscribe(runId, () => {
            catchUp();
            if (finished || writer.isClosed) unsubscribe();
          });
          stream.onAbort(() => (unsubscribe(), resolve()));
          catchUp();
          if (finished) unsubscribe();
        });
      } else {
        while (!finished && !writer.isClosed) {
          await markFollowed(deps.db.sql, runId);
          for (const e of await listRunEvents(deps.db.sql, runId, last)) if (!deliver(e)) break;
          if (finished) break;
          const now = await getRun(deps.db.sql, runId);
          if (now?.status === "running" && Date.now() - now.heartbeatAt.getTime() > STALE_RUN_MS) {
            await failAbandonedRuns(deps.db.sql, { staleAfterMs: STALE_RUN_MS, ownerIs: now.owner });
            continue;
          }
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
      }
      await writer.drain();
      writer.close();
    });
  });
}
