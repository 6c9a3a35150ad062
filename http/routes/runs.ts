import type { Hono } from "hono";
import { AppError } from "../../driver/errors";
import { ABANDONED, ABANDONED_MESSAGE, failAbandonedRuns, getRun, listRunEnding, listRunEvents, markFollowed, type RunEventRow, type RunRow } from "../../storage/runs";
import type { AuthEnv } from "../auth";
import type { Deps } from "../deps";
import { SseWriter } from "../sse";
import { sseResponse } from "../sse-response";

/** A run silent this long is taken for dead: its process no longer flushes or beats. */
export const STALE_RUN_MS = 15_000;

/**
 * GET /v1/runs/{runId}/events — replays the stored events after Last-Event-ID, then follows
 * the live run: from memory when this process serves it, else by reading what the serving
 * process flushes to the database — on a PostgreSQL server when that process announces it
 * (LISTEN/NOTIFY, server/run-waker.ts), else by polling. Ends after `done`.
 */
export function registerRunRoutes(app: Hono<AuthEnv>, deps: Deps): void {
  /** A finished (or running) run's debug stages as stored, for a page reloaded after the turn (the Sandbox). */
  app.get("/v1/runs/:runId/stages", async (c) => {
    const runId = c.req.param("runId");
    const run = await getRun(deps.db.sql, runId);
    if (!run || run.tenantId !== c.get("tenantId")) throw new AppError("not_found", "Такого запуска нет.");
    const events = await listRunEvents(deps.db.sql, runId, 0);
    return c.json({ runId, stages: events.filter((e) => e.event === "stage").map((e) => e.data) });
  });

  app.get("/v1/runs/:runId/events", async (c) => {
    const runId = c.req.param("runId");
    const run = await getRun(deps.db.sql, runId);
    if (!run || run.tenantId !== c.get("tenantId")) throw new AppError("not_found", "Такого запуска нет.");
    const header = c.req.header("last-event-id") ?? c.req.query("lastEventId") ?? "0";
    // Digits only ("5abc" is not 5) and within what a run's sequence can reach (a huge id reached the database as an error).
    const after = /^\d{1,9}$/.test(header.trim()) ? Number(header.trim()) : NaN;
    if (!Number.isSafeInteger(after)) throw new AppError("invalid_request", "Last-Event-ID должен быть неотрицательным целым.");
    return sseResponse(c, async (stream) => {
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
          // A client resuming after `done` of an ended run has it all (it would wait forever otherwise).
          const over = () => finished || writer.isClosed || (live.ended && last >= (live.events.at(-1)?.seq ?? 0));
          const catchUp = () => {
            for (const e of live.events) if (e.seq > last) deliver(e);
            if (over()) resolve();
          };
          const unsubscribe = deps.hub.subscribe(runId, () => {
            catchUp();
            if (over()) unsubscribe();
          });
          stream.onAbort(() => (unsubscribe(), resolve()));
          catchUp();
          if (over()) unsubscribe();
        });
      } else {
        while (!finished && !writer.isClosed) {
          // Armed before reading, so news stored while this reads still wakes the next wait.
          const news = deps.waker.arm(runId);
          await markFollowed(deps.db.sql, runId);
          const now = await getRun(deps.db.sql, runId);
          if (now?.outcome === ABANDONED) {
            // Closed by recovery after its process died. That process may have sent events it
            // never stored, so the stored ending can carry ids this client already saw (from
            // the dead process): then it gets the ending numbered after what it saw.
            const ending = await listRunEnding(deps.db.sql, runId);
            if (ending.length === 2 && last >= ending[0]!.seq) {
              for (const e of ending) deliver({ ...e, seq: last + 1 });
              break;
            }
          }
          const rows = await listRunEvents(deps.db.sql, runId, last);
          for (const e of rows) if (!deliver(e)) break;
          if (finished) break;
          if (now && now.status !== "running" && rows.length === 0) {
            // Ended and nothing after Last-Event-ID: the client has it all — unless no `done`
            // was ever stored (a run closed by an older recovery), then it gets an ending.
            const stored = await listRunEnding(deps.db.sql, runId);
            if (!stored.some((e) => e.event === "done")) for (const e of endingOf(now)) deliver({ ...e, seq: last + 1 });
            break;
          }
          if (now?.status === "running" && Date.now() - now.heartbeatAt.getTime() > STALE_RUN_MS) {
            await failAbandonedRuns(deps.db.sql, { staleAfterMs: STALE_RUN_MS, ownerIs: now.owner });
            continue;
          }
          await news.wait();
        }
      }
      await writer.drain();
      writer.close();
    });
  });
}

/** The ending of an ended run that has none stored. */
function endingOf(run: RunRow): Omit<RunEventRow, "seq">[] {
  if (run.status !== "failed") return [{ event: "done", data: {} }];
  return [
    { event: "error", data: { code: run.errorCode ?? "internal", message: ABANDONED_MESSAGE } },
    { event: "done", data: {} },
  ];
}
