import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listMessages } from "../../../storage/messages";
import { clinicMessagesMeta } from "../../../systems/clinic/message-meta";
import { routerSystemPrompt } from "../../../systems/clinic/prompt";
import { useTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";

/** Issue 14 item 8: the router is the system branch `_router`, versioned and edited like any branch. */

const server = useTestServer({ llm: true, tokens: "a:tok-a", env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;
const A = { authorization: "Bearer tok-a", "content-type": "application/json" };

const api = async (path: string, init: RequestInit = {}) => {
  const r = await fetch(`${server.url}${path}`, { ...init, headers: A });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
};
async function routerPromptOfTurn(id: string, text: string): Promise<string> {
  llm.reset();
  llm.script("router", "general_info");
  llm.script("branch", "Мы на Лесной, 5.");
  const r = await postSse(`${server.url}/v1/clinic/threads/${id}/messages`, { text }, A);
  expect(eventsNamed(r, "final")).toHaveLength(1);
  const call = llm.calls.find((c) => c.role === "router")!;
  return call.messages[0]!.content;
}

describe("the _router system branch", () => {
  it("migration 000007 seeds exactly the prompt the code seeds", () => {
    const sqlText = readFileSync(
      join(__dirname, "../../../systems/clinic/migrations/000007_clinic_router_branch.sql"),
      "utf8",
    );
    const json = /'(\{"title".*\})'::jsonb/s.exec(sqlText)![1]!.replace(/''/g, "'");
    expect(JSON.parse(json)).toEqual({ title: "Маршрутизатор", system_prompt: routerSystemPrompt() });
  });

  it("is listed with its versions; the router call uses the active version; a rollback takes effect; replay rebuilds across versions", async () => {
    const settings = await api("/v1/clinic/branches");
    expect(settings.body.router).toMatchObject({ code: "_router", version: 1, system_prompt: routerSystemPrompt() });
    expect(settings.body.versions).toContain("_router@1");
    const thread = (await api("/v1/clinic/threads", { method: "POST", body: "{}" })).body.threadId as string;
    expect(await routerPromptOfTurn(thread, "Какой у вас адрес?")).toBe(routerSystemPrompt());

    const edited = `${routerSystemPrompt()}\nЕсли пациент пишет о боли — escalate_human.`;
    const created = await api("/v1/clinic/branches/_router/versions", {
      method: "POST",
      body: JSON.stringify({ config: { system_prompt: edited } }),
    });
    expect(created).toMatchObject({ status: 201, body: { code: "_router", version: 2, active: true } });
    expect(await routerPromptOfTurn(thread, "А парковка есть?")).toBe(edited);
    const versions = (await api("/v1/clinic/branches/_router/versions")).body.versions as {
      version: number;
      active: boolean;
      config: { system_prompt: string };
    }[];
    expect(versions.map((v) => [v.version, v.active])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(versions[1]!.config.system_prompt).toBe(edited);

    // A stored turn names the router version it ran with.
    const messages = (await api(`/v1/clinic/threads/${thread}`)).body.messages as { meta: { settings?: string } }[];
    expect(messages.at(-1)!.meta.settings).toContain("_router@2");

    const rolledBack = await api("/v1/clinic/branches/_router/versions/1/activate", { method: "POST" });
    expect(rolledBack.status).toBe(200);
    expect(await routerPromptOfTurn(thread, "Во сколько открываетесь?")).toBe(routerSystemPrompt());

    const replay = (await api(`/v1/conversations/${thread}/replay`)).body as {
      machines: { replayed: boolean; matches: boolean; definitions: string[] }[];
    };
    const m = replay.machines[0]!;
    expect(m).toMatchObject({ replayed: true, matches: true });
    expect(m.definitions.some((d) => d.includes("_router@1"))).toBe(true);
    expect(m.definitions.some((d) => d.includes("_router@2"))).toBe(true);
  });

  it("a reply stores its settings versions only when they changed, and every reply shows its own (thread and inbox)", async () => {
    const thread = (await api("/v1/clinic/threads", { method: "POST", body: "{}" })).body.threadId as string;
    const before = (await api("/v1/clinic/branches")).body.versions as string;
    await routerPromptOfTurn(thread, "Какой у вас адрес?");
    await routerPromptOfTurn(thread, "А парковка есть?");
    const created = await api("/v1/clinic/branches/_router/versions", {
      method: "POST",
      body: JSON.stringify({ config: { system_prompt: `${routerSystemPrompt()}\nОтвечай кратко.` } }),
    });
    expect(created.status).toBe(201);
    const after = (await api("/v1/clinic/branches")).body.versions as string;
    expect(after).not.toBe(before);
    await routerPromptOfTurn(thread, "Во сколько открываетесь?");
    await routerPromptOfTurn(thread, "А в субботу?");
    // Stored: named on the first reply and on the first after the edit only.
    const stored = await server.db.sql<{ settings: string | null }[]>`
      select meta ->> 'settings' as settings from messages
      where conversation_id = ${thread} and role = 'assistant' order by seq`;
    expect(stored.map((r) => r.settings)).toEqual([before, null, after, null]);
    // Shown: every reply with the versions that answered it, flat state fields beside them.
    const expected = [before, before, after, after];
    const thr = (await api(`/v1/clinic/threads/${thread}`)).body.messages as { role: string; meta: any }[];
    const replies = thr.filter((m) => m.role === "assistant");
    expect(replies.map((m) => m.meta.settings)).toEqual(expected);
    expect(replies[0]!.meta).toMatchObject({ activeBranch: "general_info", events: expect.any(Array) });
    expect(replies[0]!.meta.state).toBeUndefined();
    // Empty `events` and `fragments` are not stored, and every reply still shows both.
    const metas = await server.db.sql<{ meta: Record<string, unknown> }[]>`
      select meta from messages where conversation_id = ${thread} and role = 'assistant' order by seq`;
    replies.forEach((m, i) => {
      expect(m.meta.events).toEqual(metas[i]!.meta.events ?? []);
      expect(m.meta.fragments).toEqual(metas[i]!.meta.fragments ?? []);
      if (m.meta.events.length === 0) expect(metas[i]!.meta).not.toHaveProperty("events");
      if (m.meta.fragments.length === 0) expect(metas[i]!.meta).not.toHaveProperty("fragments");
    });
    const inbox = (await api(`/v1/inbox/conversations/${thread}`)).body.messages as { role: string; meta: any }[];
    expect(inbox.filter((m) => m.role === "assistant").map((m) => m.meta.settings)).toEqual(expected);
    // A page that starts after the reply that named them still shows them (read from before the page).
    const page = await listMessages(server.db.sql, thread, 2);
    expect(page.map((m) => m.role)).toEqual(["user", "assistant"]);
    const shown = await clinicMessagesMeta(server.db.sql, thread, page);
    expect(shown[1]!.settings).toBe(after);
    await api("/v1/clinic/branches/_router/versions/1/activate", { method: "POST" });
  });

  it("refuses an empty prompt and an unknown code, in Russian", async () => {
    const empty = await api("/v1/clinic/branches/_router/versions", {
      method: "POST",
      body: JSON.stringify({ config: { system_prompt: "  " } }),
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/маршрутизатора/);
    expect((await api("/v1/clinic/branches/_nobody/versions")).status).toBe(404);
  });

  it("a version in the path that is not a positive integer is a 400 before any SQL; a missing one is a 404", async () => {
    for (const path of [
      "/v1/clinic/branches/_router/versions/abc/activate",
      "/v1/clinic/branches/_router/versions/0/activate",
      "/v1/clinic/branches/_router/versions/99999999999/activate",
      "/v1/clinic/branches/new_booking/steps/versions/1.5/activate",
    ]) {
      const r = await api(path, { method: "POST" });
      expect(r.status, path).toBe(400);
      expect(r.body.error).toMatchObject({ code: "invalid_request" });
      expect(r.body.error.message).toMatch(/Версия в адресе/);
    }
    expect((await api("/v1/clinic/branches/_router/versions/77/activate", { method: "POST" })).status).toBe(404);
  });
});
