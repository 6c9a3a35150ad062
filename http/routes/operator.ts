import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { AppError } from "../../driver/errors";
import { machineCatalog } from "../../driver/system";
import { buildOpenApi } from "../openapi/document";
import type { AuthEnv } from "../auth";
import type { Deps, HttpDialogueSystem } from "../deps";
import { startInspectorBridge, type InspectorBridge } from "../operator/inspector-bridge";
import { machineRoutes } from "./operator-machines";
import { operatorPages } from "./operator-pages";
import { definitionOf, replayRoutes } from "./operator-replay";

/**
 * Everything operators and engineers look at: the pages (Отладка, Песочница, Настройки,
 * Workbench, Схемы, API, Документация), machine diagrams, the OpenAPI document, and — with
 * STATELY_INSPECT=true — the bridge to Stately's inspector.
 */
export function operatorRoutes(
  deps: Deps,
  systems: readonly HttpDialogueSystem[],
  /** The gateway's routes, read per request: /openapi.json lists every route the server has. */
  gatewayRoutes: () => readonly { method: string; path: string }[],
  env: Record<string, string | undefined> = process.env,
): { app: Hono<AuthEnv>; inspector: InspectorBridge | null } {
  const app = new Hono<AuthEnv>();
  app.route("/", operatorPages());
  app.route("/", machineRoutes(deps, systems));
  app.route("/", replayRoutes(deps, systems));
  // Built on request, from the routes the gateway has by then: a route added later still shows up.
  app.get("/openapi.json", (c) => c.json(buildOpenApi(systems, [...gatewayRoutes()])));

  const inspector =
    env.STATELY_INSPECT === "true"
      ? startInspectorBridge(
          deps,
          env,
          (tenantId) => machineCatalog(systems, { sql: deps.db.sql, tenantId }),
          (tenantId, label, storedMachineId) => definitionOf(systems, deps.db.sql, tenantId, label, storedMachineId),
        )
      : null;
  app.get("/v1/inspect/events", (c) => {
    if (!inspector) throw new AppError("not_found", "Инспектор выключен: запустите сервер с STATELY_INSPECT=true.");
    const tenantId = c.get("tenantId");
    c.header("cache-control", "no-cache, no-transform");
    return streamSSE(c, async (stream) => {
      let id = 0;
      let chain = Promise.resolve();
      const unsubscribe = inspector.subscribe((e, tenant) => {
        if (tenant !== tenantId) return;
        chain = chain
          .then(() => stream.writeSSE({ event: "inspect", id: String(++id), data: JSON.stringify(e) }))
          .catch(() => {});
      });
      await new Promise<void>((resolve) => stream.onAbort(() => (unsubscribe(), resolve())));
    });
  });
  return { app, inspector };
}
