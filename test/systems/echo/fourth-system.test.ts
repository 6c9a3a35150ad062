import { beforeAll, describe, expect, it } from "vitest";
import { conversationKinds, machineCatalog, modelRoles } from "../../../driver/system";
import { loadConfig } from "../../../http/config";
import { migrationDirs, runMigrations } from "../../../storage/migrate";
import { dialogueSystems } from "../../../systems";
import { useTestServer, type StartedTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";
import { echoSystem } from "./index";

/**
 * Adding a dialogue system is its folder, one entry in the systems list and its migration:
 * the gateway mounts its routes, runs its turns through the driver, replays its log and draws
 * its machine, and the offline model answers its role — with no other file naming it.
 */
// The database first: the echo migration runs before the server starts.
const t = useTestServer({ serve: false });
const systems = [...dialogueSystems, echoSystem];
let server: StartedTestServer;
const H = { authorization: "Bearer tok-a", "content-type": "application/json" };

beforeAll(async () => {
  // The echo system's own migration, after the shared and real systems' ones.
  expect(await runMigrations(t.db.sql, [...migrationDirs(), echoSystem.migrations!])).toEqual(["900001_echo.sql"]);
  server = await t.start({ tokens: "a:tok-a", systems, env: { RUN_DETACH_GRACE_MS: "0" } });
});

describe("a fourth dialogue system from one list entry", () => {
  it("the derived lists name it: kinds, model roles (LLM_MODEL_ECHO configurable), diagrams", async () => {
    expect(conversationKinds(systems)).toEqual(["clinic", "workbench", "evidence", "echo"]);
    expect(modelRoles(systems)).toContain("echo");
    expect(loadConfig({ LLM_MODEL_ECHO: "echo-model" }).llm.roleModels.echo).toBe("echo-model");
    expect((await machineCatalog(systems, null)).map((e) => e.id)).toContain("echo");
    expect((await machineCatalog(dialogueSystems, null)).map((e) => e.id)).not.toContain("echo");
    // Each real system's migrations folder is one storage/migrate.ts finds by convention.
    for (const s of dialogueSystems) expect(migrationDirs()).toContain(s.migrations);
  });

  it("runs a turn, replays it from the log, and draws the conversation's state", async () => {
    const created = await fetch(`${server.url}/v1/echo/conversations`, { method: "POST", headers: H, body: "{}" });
    expect(created.status).toBe(201);
    const { conversationId } = (await created.json()) as { conversationId: string };

    const turn = await postSse(`${server.url}/v1/echo/conversations/${conversationId}/messages`, { text: "привет" }, H);
    expect(eventsNamed(turn, "final")).toEqual([{ answer: "эхо: привет", turns: 1 }]);
    expect(eventsNamed(turn, "done")).toHaveLength(1);

    const replay = (await (
      await fetch(`${server.url}/v1/conversations/${conversationId}/replay`, { headers: H })
    ).json()) as {
      kind: string;
      machines: { machineId: string; definitions: string[]; replayed: boolean; matches: boolean }[];
    };
    expect(replay.kind).toBe("echo");
    expect(replay.machines).toEqual([
      expect.objectContaining({ machineId: "echo", definitions: ["echo@1"], replayed: true, matches: true }),
    ]);

    const list = (await (await fetch(`${server.url}/v1/machines`, { headers: H })).json()) as {
      machines: { id: string; conversationKind: string; states: number }[];
    };
    expect(list.machines.find((m) => m.id === "echo")).toEqual(
      expect.objectContaining({ conversationKind: "echo", states: 1 }),
    );

    const diagram = (await (
      await fetch(`${server.url}/v1/machines/echo/diagram?format=json&conversationId=${conversationId}`, { headers: H })
    ).json()) as { active: string[]; caption: string };
    expect(diagram.active).toContain("echo.ready");
    expect(diagram.caption).toContain("ходов: 1");
  });

  it("/openapi.json documents its operations and its events from its contract.ts, and resuming a run may stream them", async () => {
    type Doc = {
      paths: Record<string, Record<string, { operationId?: string; "x-undocumented"?: boolean }>>;
      tags: { name: string }[];
      components: { schemas: Record<string, unknown> };
    };
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Doc;
    expect(doc.paths["/v1/echo/conversations/{id}/messages"]?.post?.operationId).toBe("sendEchoMessage");
    expect(doc.paths["/v1/echo/conversations/{id}/messages"]?.post?.["x-undocumented"]).toBeUndefined();
    expect(doc.tags.map((x) => x.name)).toContain("echo");
    expect(JSON.stringify(doc.components.schemas.AnyRunEvent)).toContain("EchoSseEvent");
  });

  it("the server without the entry does not serve it", async () => {
    const plain = await t.start({ tokens: "a:tok-a" });
    try {
      const doc = (await (await fetch(`${plain.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths).filter((p) => p.startsWith("/v1/echo"))).toEqual([]);
      expect(
        (await fetch(`${plain.url}/v1/echo/conversations`, { method: "POST", headers: H, body: "{}" })).status,
      ).toBe(404);
      expect((await fetch(`${plain.url}/v1/machines/echo/diagram`, { headers: H })).status).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});
