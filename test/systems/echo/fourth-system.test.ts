import { beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import type { DataOf, RunEventIn } from "../../../client";
import type { SystemEvents } from "../../../contract/http";
import { conversationKinds, machineCatalog, modelRoles } from "../../../driver/system";
import { loadConfig } from "../../../http/config";
import { requiredRoleFor } from "../../../http/roles";
import { acceptedConversationKinds } from "../../../storage/conversation-kinds";
import { createConversation } from "../../../storage/conversations";
import { migrationDirs } from "../../../storage/migrate";
import { dialogueSystems } from "../../../systems";
import { scriptedLlmConfig } from "../../utils/scripted-llm";
import { useTestServer, type StartedTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";
import type { EchoEvents } from "./contract";
import { echoSystem } from "./index";

/**
 * Adding a dialogue system is its folder and one entry in the systems list: the gateway mounts
 * its routes, opens the operations its contract documents as `chat` to a chat token, lists its
 * conversations in the inbox (and at its own list path), runs its turns through the driver,
 * replays its log and draws its machine, the database accepts its conversation kind, and the
 * offline and the scripted model answer its role — with no other file naming it.
 */
const t = useTestServer({ serve: false, llm: true });
const systems = [...dialogueSystems, echoSystem];
let server: StartedTestServer;
const TOKENS = "a:tok-a,chat@a:tok-chat";
const H = { authorization: "Bearer tok-a", "content-type": "application/json" };
const CHAT = { authorization: "Bearer tok-chat", "content-type": "application/json" };

beforeAll(async () => {
  // Nothing migrates the shared table for it: the database refuses the kind until a server serving it starts.
  expect(await acceptedConversationKinds(t.db.sql)).not.toContain("echo");
  await expect(createConversation(t.db.sql, "a", "echo")).rejects.toMatchObject({ code: "23503" });
  server = await t.start({ tokens: TOKENS, systems, env: { RUN_DETACH_GRACE_MS: "0" } });
});

// Compile-time (`npx tsc`): the client's union of any run's events is read from the systems'
// contracts, each registering its events (contract/http.ts `SystemEvents`); echo's contract would
// add `echo: EchoEvents` there. This fixture is not served by default, so it is added by hand here.
expectTypeOf<EchoEvents["final"]>().toMatchTypeOf<DataOf<RunEventIn<SystemEvents & { echo: EchoEvents }>, "final">>();
expectTypeOf<EchoEvents["final"]>().not.toMatchTypeOf<DataOf<RunEventIn<SystemEvents>, "final">>();

/** A conversation of the echo system, created with `headers`' token. */
async function createEcho(headers: Record<string, string>): Promise<string> {
  const created = await fetch(`${server.url}/v1/echo/conversations`, { method: "POST", headers, body: "{}" });
  expect(created.status).toBe(201);
  return ((await created.json()) as { conversationId: string }).conversationId;
}

describe("a fourth dialogue system from one list entry", () => {
  it("the derived lists name it: kinds, model roles (LLM_MODEL_ECHO configurable), diagrams", async () => {
    expect(conversationKinds(systems)).toEqual(["clinic", "workbench", "evidence", "echo"]);
    expect(modelRoles(systems)).toContain("echo");
    expect(loadConfig({ LLM_MODEL_ECHO: "echo-model" }).llm.roleModels.echo).toBe("echo-model");
    // The scripted model of the tests points the served systems' roles at itself, echo's too.
    expect(scriptedLlmConfig(t.llm, systems).roleModels.echo).toBe("test-echo");
    expect(scriptedLlmConfig(t.llm).roleModels).not.toHaveProperty("echo");
    expect((await machineCatalog(systems, null)).map((e) => e.id)).toContain("echo");
    expect((await machineCatalog(dialogueSystems, null)).map((e) => e.id)).not.toContain("echo");
    // Each real system's migrations folder is one storage/migrate.ts finds by convention.
    for (const s of dialogueSystems) expect(migrationDirs()).toContain(s.migrations);
  });

  it("the database accepts its kind once a server serving it has started", async () => {
    expect(await acceptedConversationKinds(t.db.sql)).toEqual(expect.arrayContaining(conversationKinds(systems)));
    expect((await createConversation(t.db.sql, "a", "echo")).kind).toBe("echo");
    // Still a check: a kind no served system declares is refused.
    await expect(createConversation(t.db.sql, "a", "no-such-system")).rejects.toMatchObject({ code: "23503" });
  });

  it("a chat token may use the operations its contract documents as `chat`, and no other", async () => {
    const role = requiredRoleFor(systems);
    expect(role("POST", "/v1/echo/conversations")).toBe("chat");
    expect(role("POST", "/v1/echo/conversations/c1/messages")).toBe("chat");
    expect(role("GET", "/v1/echo/conversations")).toBe("operator");
    expect(requiredRoleFor(dialogueSystems)("POST", "/v1/echo/conversations")).toBe("operator");

    const id = await createEcho(CHAT);
    const turn = await postSse(`${server.url}/v1/echo/conversations/${id}/messages`, { text: "как дела" }, CHAT);
    expect(turn.status).toBe(200);
    expect(eventsNamed(turn, "final")).toEqual([{ answer: "эхо: как дела", turns: 1 }]);
    const list = await fetch(`${server.url}/v1/echo/conversations`, { headers: CHAT });
    expect(list.status).toBe(403);
  });

  it("the inbox lists its conversations: the system filter and its own list path", async () => {
    const id = await createEcho(H);
    type Page = { items: { id: string; system: string }[] };
    const filtered = (await (
      await fetch(`${server.url}/v1/inbox/conversations?system=echo&limit=100`, { headers: H })
    ).json()) as Page;
    expect(filtered.items.map((i) => i.id)).toContain(id);
    expect(new Set(filtered.items.map((i) => i.system))).toEqual(new Set(["echo"]));
    const own = await fetch(`${server.url}/v1/echo/conversations?limit=100`, { headers: H });
    expect(own.status).toBe(200);
    expect(((await own.json()) as Page).items).toEqual(filtered.items);
    const all = (await (await fetch(`${server.url}/v1/inbox/conversations?limit=100`, { headers: H })).json()) as Page;
    expect(all.items.map((i) => i.id)).toContain(id);
  });

  it("the scripted model of the tests answers its role", async () => {
    const scripted = await t.start({ tokens: TOKENS, systems, llm: true });
    try {
      t.llm.script("echo", "по сценарию");
      const created = await fetch(`${scripted.url}/v1/echo/conversations`, { method: "POST", headers: H, body: "{}" });
      const { conversationId } = (await created.json()) as { conversationId: string };
      const turn = await postSse(`${scripted.url}/v1/echo/conversations/${conversationId}/messages`, { text: "а" }, H);
      expect(eventsNamed(turn, "final")).toEqual([{ answer: "по сценарию", turns: 1 }]);
      expect(t.llm.count("echo")).toBe(1);
    } finally {
      await scripted.stop();
    }
  });

  it("runs a turn, replays it from the log, and draws the conversation's state", async () => {
    const conversationId = await createEcho(H);

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
    // Its list, the inbox filter's systems and the machine catalog's kinds name it.
    expect(doc.paths["/v1/echo/conversations"]?.get?.operationId).toBe("listEchoConversations");
    const filter = (
      doc.paths["/v1/inbox/conversations"]?.get as unknown as {
        parameters: { name: string; schema: { enum?: string[] } }[];
      }
    ).parameters.find((p) => p.name === "system");
    expect(filter?.schema.enum).toEqual(conversationKinds(systems));
    const summary = doc.components.schemas.MachineSummary as { properties: { conversationKind: { enum: string[] } } };
    expect(summary.properties.conversationKind.enum).toEqual(conversationKinds(systems));
  });

  it("the server without the entry does not serve it", async () => {
    const plain = await t.start({ tokens: "a:tok-a" });
    try {
      const doc = (await (await fetch(`${plain.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths).filter((p) => p.startsWith("/v1/echo"))).toEqual([]);
      const filter = await fetch(`${plain.url}/v1/inbox/conversations?system=echo`, { headers: H });
      expect(filter.status).toBe(400);
      expect((await fetch(`${plain.url}/v1/echo/conversations`, { headers: H })).status).toBe(404);
      expect(
        (await fetch(`${plain.url}/v1/echo/conversations`, { method: "POST", headers: H, body: "{}" })).status,
      ).toBe(404);
      expect((await fetch(`${plain.url}/v1/machines/echo/diagram`, { headers: H })).status).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});
