import { Hono } from "hono";
import { AppError } from "../../driver/errors";
import { getRun, listRunEvents } from "../../storage/runs";
import type { AuthEnv } from "../auth";
import { accessOf } from "../conversation-access";
import type { Deps } from "../deps";
import { followRunResponse, lastEventId, wantsStream } from "../run-follow";

/**
 * GET /v1/runs/{runId}/events — replays the stored events after Last-Event-ID, then follows
 * the live run (http/run-follow.ts). Ends after `done`; a finished run with nothing after
 * Last-Event-ID is 204, and so is an unknown run for an EventSource (Accept: text/event-stream),
 * so a browser stops reconnecting; a fetch client gets a 404 JSON for an unknown run.
 */
export function runRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  /** A finished (or running) run's debug stages as stored, for a page reloaded after the turn (the Sandbox). */
  app.get("/v1/runs/:runId/stages", async (c) => {
    const runId = c.req.param("runId");
    const run = await getRun(deps.db.sql, runId, accessOf(c));
    if (!run || run.tenantId !== c.get("tenantId")) throw new AppError("not_found", "Такого запуска нет.");
    const events = await listRunEvents(deps.db.sql, runId, 0);
    return c.json({ runId, stages: events.filter((e) => e.event === "stage").map((e) => e.data) });
  });

  app.get("/v1/runs/:runId/events", async (c) => {
    const runId = c.req.param("runId");
    const after = lastEventId(c);
    // A `chat` client follows only the runs of its own conversations (http/conversation-access.ts).
    const run = await getRun(deps.db.sql, runId, accessOf(c));
    if (!run || run.tenantId !== c.get("tenantId")) {
      if (wantsStream(c)) return c.body(null, 204);
      throw new AppError("not_found", "Такого запуска нет (или он удалён вместе с диалогом).", {
        reason: "run_not_found",
        runId,
      });
    }
    return followRunResponse(c, deps, run, after, { "x-run-id": run.id, "x-conversation-id": run.conversationId });
  });
  return app;
}
