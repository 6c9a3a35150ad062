import { describe, expect, it } from "vitest";
import { createApp } from "../../http/app";
import { parseTokens } from "../../http/config";
import { requiredRoleFor } from "../../http/roles";
import { useTestServer } from "../utils/server";
import { eventsNamed, postSse } from "../utils/sse";

/** Issue 17 item 2: roles on tokens, enumerated from the app's own route list. */

const TOKENS = "a:tok-full,chat@a:tok-chat,operator@a:tok-op,admin@a:tok-admin";
const as = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

const server = useTestServer({ llm: true, tokens: TOKENS, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;
/** The role policy of the served systems (the chat operations their contracts document, their admin paths). */
const requiredRole = (method: string, path: string) => requiredRoleFor(server.deps.systems)(method, path);

/** Every (method, concrete path) the app answers under /v1, parameters filled with a dummy id. */
function v1Routes(): { method: string; path: string; pattern: string }[] {
  const app = createApp(server.deps);
  const out = new Map<string, { method: string; path: string; pattern: string }>();
  for (const r of app.routes) {
    if (!r.path.startsWith("/v1/") || r.path.includes("*")) continue;
    const path = r.path.replace(/:[A-Za-z]+(\{[^}]*\})?/g, "x1");
    for (const method of r.method === "ALL" ? ["GET", "POST"] : [r.method])
      out.set(`${method} ${path}`, { method, path, pattern: r.path });
  }
  return [...out.values()];
}

const call = (method: string, path: string, token: string) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: as(token),
    ...(method === "GET" || method === "HEAD" ? {} : { body: "{}" }),
  });

describe("token format", () => {
  it("a bare token keeps full rights; role@tenant:token grants the role", () => {
    const m = parseTokens("tok0,acme:tok1,chat@acme:tok2,operator@b:tok3")!;
    expect(m.get("tok0")).toEqual({ tenant: "default", role: "admin" });
    expect(m.get("tok1")).toEqual({ tenant: "acme", role: "admin" });
    expect(m.get("tok2")).toEqual({ tenant: "acme", role: "chat" });
    expect(m.get("tok3")).toEqual({ tenant: "b", role: "operator" });
  });
});

describe("roles over every route of the app", () => {
  it("the routes open to `chat` are exactly the conversation routes", () => {
    const chat = v1Routes()
      .filter((r) => requiredRole(r.method, r.path) === "chat")
      .map((r) => `${r.method} ${r.pattern}`)
      .sort();
    expect(chat).toEqual(
      [
        "GET /v1/clinic/threads/:threadId",
        "GET /v1/clinic/threads/:threadId/events",
        "GET /v1/evidence/conversations/:id",
        "GET /v1/evidence/runs/:runId",
        "GET /v1/runs/:runId/events",
        "GET /v1/runs/:runId/stages",
        "GET /v1/workbench/conversations/:id",
        "GET /v1/workbench/interactions/:id",
        "GET /v1/workbench/sample-workspace",
        "POST /v1/clinic/threads",
        "POST /v1/clinic/threads/:threadId/messages",
        "POST /v1/evidence/conversations",
        "POST /v1/evidence/conversations/:id/messages",
        "POST /v1/workbench/conversations",
        "POST /v1/workbench/conversations/:id/messages",
      ].sort(),
    );
  });

  it("a chat token gets 403 on every operator/admin route; an operator token on every admin route", async () => {
    const routes = v1Routes();
    const guarded = routes.filter((r) => requiredRole(r.method, r.path) !== "chat");
    const adminOnly = routes.filter((r) => requiredRole(r.method, r.path) === "admin");
    expect(guarded.length).toBeGreaterThanOrEqual(20);
    expect(adminOnly.map((r) => `${r.method} ${r.pattern}`)).toEqual(
      expect.arrayContaining([
        "POST /v1/clinic/kb/documents",
        "DELETE /v1/clinic/kb/documents/:id",
        "POST /v1/clinic/branches/:code/versions",
        "POST /v1/clinic/branches/:code/versions/:version/activate",
      ]),
    );
    const wrong: string[] = [];
    for (const r of guarded) {
      const res = await call(r.method, r.path, "tok-chat");
      if (res.status !== 403) wrong.push(`chat ${r.method} ${r.path} → ${res.status}`);
      else expect(((await res.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    }
    for (const r of adminOnly) {
      const res = await call(r.method, r.path, "tok-op");
      await res.body?.cancel();
      if (res.status !== 403) wrong.push(`operator ${r.method} ${r.path} → ${res.status}`);
    }
    // The admin token (and a bare one) pass the gate everywhere: whatever they get, it is not 403.
    for (const r of routes) {
      for (const tok of ["tok-admin", "tok-full"]) {
        const res = await call(r.method, r.path, tok);
        await res.body?.cancel().catch(() => {});
        if (res.status === 403 || res.status === 401) wrong.push(`${tok} ${r.method} ${r.path} → ${res.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("the chat token talks: a clinic thread is created and answered", async () => {
    const created = await fetch(`${server.url}/v1/clinic/threads`, {
      method: "POST",
      headers: as("tok-chat"),
      body: "{}",
    });
    expect(created.status).toBe(201);
    const { threadId, conversationToken } = (await created.json()) as { threadId: string; conversationToken: string };
    llm.script("router", "general_info");
    llm.script("branch", 'Мы на Лесной, 5.\nSTATE_JSON: {"state_after": "answered", "slots_updated": {}}');
    const r = await postSse(
      `${server.url}/v1/clinic/threads/${threadId}/messages`,
      { text: "Какой у вас адрес?" },
      { ...as("tok-chat"), "x-conversation-token": conversationToken },
    );
    expect(r.status).toBe(200);
    expect(eventsNamed(r, "final")).toHaveLength(1);
  });
});

describe("?access_token= only on GET stream routes", () => {
  it("is refused on a plain route and accepted on a run's event stream", async () => {
    const plain = await fetch(`${server.url}/v1/clinic/kb/documents?access_token=tok-admin`);
    expect(plain.status).toBe(401);
    expect(((await plain.json()) as { error: { message: string } }).error.message).toMatch(/только потоками событий/);
    const post = await fetch(`${server.url}/v1/clinic/threads?access_token=tok-admin`, { method: "POST", body: "{}" });
    expect(post.status).toBe(401);
    const stream = await fetch(
      `${server.url}/v1/runs/00000000-0000-0000-0000-000000000000/events?access_token=tok-chat`,
    );
    expect(stream.status).toBe(404); // authenticated; the run just does not exist
  });
});

describe("escalation in /v1/stats/outcomes", () => {
  it("an escalated turn is ESCALATED (not FULLY_ANSWERED) and its reason is counted", async () => {
    const created = await fetch(`${server.url}/v1/clinic/threads`, {
      method: "POST",
      headers: as("tok-chat"),
      body: "{}",
    });
    const { threadId, conversationToken } = (await created.json()) as { threadId: string; conversationToken: string };
    const r = await postSse(
      `${server.url}/v1/clinic/threads/${threadId}/messages`,
      { text: "сильное кровотечение, не могу дышать" },
      { ...as("tok-chat"), "x-conversation-token": conversationToken },
    );
    const f = eventsNamed(r, "final")[0] as { events: string[]; state: { escalationReason: string } };
    expect(f.events).toContain("escalated");
    expect(f.state.escalationReason).toBe("acute_pain");
    expect((await fetch(`${server.url}/v1/stats/outcomes?kind=clinic`, { headers: as("tok-chat") })).status).toBe(403);
    const stats = (await (await fetch(`${server.url}/v1/stats/outcomes`, { headers: as("tok-op") })).json()) as {
      byOutcomeClass: { kind: string; outcomeClass: string; runs: number }[];
      byEscalationReason: { kind: string; reason: string; runs: number }[];
    };
    const clinic = stats.byOutcomeClass.filter((c) => c.kind === "clinic");
    expect(clinic.find((c) => c.outcomeClass === "ESCALATED")?.runs).toBe(1);
    expect(clinic.find((c) => c.outcomeClass === "FULLY_ANSWERED")?.runs).toBe(1);
    expect(stats.byEscalationReason).toEqual([{ kind: "clinic", reason: "acute_pain", runs: 1 }]);
  });
});
