import { Hono } from "hono";
import type { AuthEnv } from "../../http/auth";
import type { Deps } from "../../http/deps";
import { readJson } from "../../http/errors";
import { DeskSettings } from "./desk";
import { forgetDesk, loadDesk, saveDesk } from "./store/desk";

/**
 * The clinic's front desk (issue 43): working hours, time zone, the promise within hours, how
 * long a held thread stays quiet. Read by operators, written by admins (http/roles.ts).
 */
export function clinicDeskRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.get("/v1/clinic/desk", async (c) => c.json(await loadDesk(deps.db.sql, c.get("tenantId"))));
  app.post("/v1/clinic/desk", async (c) => {
    const body = await readJson(c, DeskSettings);
    await saveDesk(deps.db.sql, c.get("tenantId"), body);
    forgetDesk(c.get("tenantId"));
    return c.json(body);
  });
  return app;
}
