import { ANY_ACCESS } from "../../storage/conversation-credentials";
import { Hono } from "hono";
import { AppError } from "../../driver/errors";
import { findConversation } from "../../storage/conversations";
import { lastMachineEventType } from "../../storage/machine-events";
import { latestSnapshot } from "../../storage/operator-snapshots";
import { machineCatalog, type DialogueSystem } from "../../driver/system";
import type { MachineEntry } from "../../visualizations/catalog";
import { activeStateIds, machineGraph } from "../../visualizations/graph";
import { layoutMachine } from "../../visualizations/layout";
import { renderSvg } from "../../visualizations/svg";
import { diagramPage } from "../../visualizations/page";
import type { AuthEnv } from "../auth";
import { DiagramQuery } from "../contract";
import type { Deps } from "../deps";
import { describeZod } from "../errors";

/**
 * Machine diagrams drawn from the machine objects the server runs (the clinic's are generated
 * from the tenant's active settings), with a conversation's current state highlighted.
 */

export function machineRoutes(deps: Deps, systems: readonly DialogueSystem[]): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const sql = deps.db.sql;
  const catalog = (tenantId: string) => machineCatalog(systems, { sql, tenantId });

  app.get("/v1/machines", async (c) => {
    return c.json({
      machines: (await catalog(c.get("tenantId"))).map((m) => {
        const g = machineGraph(m.build());
        return {
          id: m.id,
          title: m.title,
          description: m.description,
          conversationKind: m.conversationKind,
          machineId: g.machineId,
          states: g.nodes.size - 1,
          transitions: g.edges.length,
        };
      }),
    });
  });

  app.get("/v1/machines/:machineId/diagram", async (c) => {
    const tenantId = c.get("tenantId");
    const parsed = DiagramQuery.safeParse(c.req.query());
    if (!parsed.success) throw new AppError("invalid_request", describeZod(parsed.error));
    const q = parsed.data;
    const entry: MachineEntry | undefined = (await catalog(tenantId)).find((m) => m.id === c.req.param("machineId"));
    if (!entry) throw new AppError("not_found", `Нет машины ${c.req.param("machineId")}. Список: GET /v1/machines.`);
    const machine = entry.build();
    let value: unknown;
    let lastEvent: string | undefined;
    let caption = "определение машины; диалог не выбран";
    if (q.conversationId) {
      const conv = await findConversation(sql, tenantId, q.conversationId, undefined, ANY_ACCESS);
      if (!conv) throw new AppError("not_found", "Такого диалога нет.");
      if (conv.kind !== entry.conversationKind)
        throw new AppError("invalid_request", `Машина ${entry.id} не относится к диалогам вида ${conv.kind}.`);
      const snap = await latestSnapshot(sql, tenantId, conv.id, entry.snapshotMachineId, q.key);
      const pos = snap ? entry.position(snap.snapshot, snap.key) : null;
      value = pos?.value;
      if (snap && pos) lastEvent = (await lastMachineEventType(sql, snap.key, conv.id)) ?? undefined;
      caption = pos
        ? `диалог ${conv.id.slice(0, 8)}: ${pos.caption}`
        : snap
          ? `диалог ${conv.id.slice(0, 8)} сейчас не в этой машине`
          : `диалог ${conv.id.slice(0, 8)}: ходов ещё не было`;
    }
    const graph = machineGraph(machine);
    c.header("cache-control", "no-store");
    if (q.format === "json") {
      const active = value !== undefined ? [...activeStateIds(graph, value)] : [];
      return c.json({
        id: entry.id,
        machineId: graph.machineId,
        title: entry.title,
        caption,
        active,
        states: [...graph.nodes.values()].map(({ internal, ...n }) => ({
          ...n,
          internal: internal.map(({ id: _i, ...e }) => e),
        })),
        transitions: graph.edges,
      });
    }
    const svg = renderSvg(graph, await layoutMachine(graph), { title: entry.title, caption, value, lastEvent });
    if (q.format === "html") return c.html(diagramPage(entry.title, entry.description, svg));
    return c.body(svg, 200, { "content-type": "image/svg+xml; charset=utf-8" });
  });
  return app;
}
