import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError } from "../driver/errors";
import { bearerAuth, type AuthEnv } from "./auth";
import { registerObservabilityRoutes, requestLog } from "./observability/routes";
import { requiredRoleFor, requireRole } from "./roles";
import type { Deps, HttpDialogueSystem } from "./deps";
import { errorResponse } from "./errors";
import { runRoutes } from "./routes/runs";
import { operatorRoutes } from "./routes/operator";
import { inboxRoutes } from "./routes/inbox";
import { inboxToolRoutes } from "./routes/inbox-tools";
import { webhookRoutes } from "./routes/webhooks";
import { registerOfflineResponder } from "../llm/client";
import { conversationAccess } from "./conversation-access";
import { documentedOperations } from "./openapi/document";
import { conversationRoutes } from "./routes/conversations";

/**
 * The gateway over the listed dialogue systems (tests pass their own list, e.g. with a test-only
 * system). The middleware is the gateway's: request log and metrics, error mapping, body limit,
 * then for /v1 draining, bearer auth and the role policy. Each system's routes and each shared
 * group (runs, operator, inbox) is a sub-app built from the deps and mounted at `/` after it, so
 * every route passes the same middleware and keeps its full path as the route label.
 */
export function createApp(deps: Deps, systems: readonly HttpDialogueSystem[] = deps.systems): Hono<AuthEnv> {
  for (const s of systems) for (const o of s.offline) registerOfflineResponder(o.role, o.respond);
  const app = new Hono<AuthEnv>();
  app.use("*", requestLog());
  app.onError((e, c) => errorResponse(c, e));
  app.notFound((c) => errorResponse(c, new AppError("not_found", `Нет такого адреса: ${c.req.method} ${c.req.path}`)));
  const tooLarge = (c: Context) =>
    errorResponse(c, new AppError("payload_too_large", `Тело запроса больше ${deps.config.bodyLimitBytes} байт.`));
  const countingLimit = bodyLimit({ maxSize: deps.config.bodyLimitBytes, onError: tooLarge });
  app.use("*", async (c, next) => {
    // GET and HEAD carry no body (@hono/node-server never reads one): asking for it would build a
    // full web Request per request, kept as long as the request lives — a follower's lifetime.
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    // A declared length is checked as declared (Node's parser never reads past it), without
    // touching the body: hono's bodyLimit opens it as a web stream, which costs more than the
    // rest of reading a small JSON body and keeps @hono/node-server off its direct read path.
    const length = c.req.header("content-length");
    if (length !== undefined && !c.req.header("transfer-encoding"))
      return Number(length) > deps.config.bodyLimitBytes ? tooLarge(c) : next();
    return countingLimit(c, next);
  });
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  registerObservabilityRoutes(app, deps);
  app.use("/v1/*", async (c, next) => {
    // Shutting down: requests already inside finish, new ones go elsewhere (http/active-turns.ts).
    if (deps.turns?.draining)
      throw new AppError("unavailable", "Сервер останавливается; повторите запрос через несколько секунд.");
    return next();
  });
  app.use("/v1/*", bearerAuth(deps.config.tokens));
  // One policy for every /v1 route (http/roles.ts): the operations the served systems document as
  // `chat`, the rest operator or admin.
  app.use("/v1/*", requireRole(requiredRoleFor(systems)));
  // A conversation belongs to whoever started it: which routes need its credential is read from
  // the documented operations of the served systems (http/conversation-access.ts).
  app.use(
    "/v1/*",
    conversationAccess(documentedOperations(systems), { legacyAccess: deps.config.conversations.legacyAccess }),
  );
  app.route("/", runRoutes(deps));
  for (const s of systems) app.route("/", s.routes(deps));
  app.route("/", operatorRoutes(deps, systems, () => app.routes).app);
  app.route("/", inboxRoutes(deps, systems));
  app.route("/", inboxToolRoutes(deps));
  app.route("/", webhookRoutes(deps));
  app.route("/", conversationRoutes(deps));
  return app;
}
