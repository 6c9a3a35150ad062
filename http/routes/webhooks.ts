import { Hono } from "hono";
import { AppError } from "../../driver/errors";
import { listDeadLetters, redeliverDeadLetter } from "../../storage/outbox";
import type { AuthEnv } from "../auth";
import type { Deps } from "../deps";

/** The webhook's dead letters (admin, http/roles.ts): listed, and sent again one by one. */
export function webhookRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.get("/v1/webhooks/dead-letters", async (c) => {
    const rows = await listDeadLetters(deps.db.sql, c.get("tenantId"));
    return c.json({ deadLetters: rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })) });
  });
  app.post("/v1/webhooks/dead-letters/:id/redeliver", async (c) => {
    const outboxId = await redeliverDeadLetter(deps.db.sql, c.get("tenantId"), c.req.param("id"));
    if (!outboxId) throw new AppError("not_found", "Такого недоставленного вебхука нет.");
    deps.webhook.kick();
    return c.json({ outboxId, status: "pending" as const });
  });
  return app;
}
