import { Hono } from "hono";
import { AppError } from "../../driver/errors";
import type { AuthEnv } from "../../http/auth";
import { sampleWorkspace } from "./resources";

/** The Workbench console's "Пример" button: the workspace snapshot the server uses when a message carries none. */
export function sampleWorkspaceRoutes(): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.get("/v1/workbench/sample-workspace", (c) => {
    try {
      return c.json(sampleWorkspace().raw as object);
    } catch (e) {
      throw new AppError("not_found", `Встроенного примера нет: ${(e as Error).message}`);
    }
  });
  return app;
}
