import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError } from "../driver/errors";
import { bearerAuth, type AuthEnv } from "./auth";
import type { Deps } from "./deps";
import { errorResponse } from "./errors";
import { registerRunRoutes } from "./routes/runs";
import { registerWorkbenchRoutes } from "./routes/workbench";
import { registerClinicRoutes } from "./routes/clinic";
import { registerOperatorRoutes } from "./routes/operator";
import { registerEvidenceRoutes } from "./routes/evidence";

export function createApp(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.onError((e, c) => errorResponse(c, e));
  app.notFound((c) => errorResponse(c, new AppError("not_found", `Нет такого адреса: ${c.req.method} ${c.req.path}`)));
  app.use(
    "*",
    bodyLimit({
      maxSize: deps.config.bodyLimitBytes,
      onError: (c) => errorResponse(c, new AppError("payload_too_large", `Тело запроса больше ${deps.config.bodyLimitBytes} байт.`)),
    }),
  );
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.use("/v1/*", bearerAuth(deps.config.tokens));
  registerRunRoutes(app, deps);
  // Feature routes register below, one line each.
  registerClinicRoutes(app, deps);
  registerWorkbenchRoutes(app, deps);
  registerOperatorRoutes(app, deps);
  registerEvidenceRoutes(app, deps);
  return app;
}
