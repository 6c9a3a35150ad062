import { describe, expect, it } from "vitest";
import { createApp } from "../../http/app";
import { ErrorBody } from "../../http/contract";
import { dialogueSystems } from "../../systems";
import { echoSystem } from "../systems/echo";
import { useTestServer } from "../utils/server";

/**
 * Issue 15 item 1: each system's routes are a Hono sub-app the gateway mounts. What the gateway
 * wraps around them must hold for every mounted route as it did when routes registered on the
 * main app: the role policy, the CONTRACT §6 error body, the body limit, and route labels that
 * are templates (a raw id in a label would grow the metrics without bound).
 */
const systems = [...dialogueSystems, echoSystem];
const TOKENS = "a:tok-full,chat@a:tok-chat,operator@a:tok-op,admin@a:tok-admin";
const as = (token?: string) => ({
  ...(token ? { authorization: `Bearer ${token}` } : {}),
  "content-type": "application/json",
});
const call = (method: string, path: string, token?: string, body?: string) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: as(token),
    ...(method === "GET" ? {} : { body: body ?? "{}" }),
  });

/** The §6 body, parsed strictly by the contract's own schema. */
async function errorOf(res: Response) {
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  return ErrorBody.strict().parse(await res.json()).error;
}

// The database accepts the echo system's conversations once this server, which serves it, starts.
const server = useTestServer({ tokens: TOKENS, systems, env: { RUN_DETACH_GRACE_MS: "0", BODY_LIMIT_BYTES: "4096" } });

describe("systems' routes as sub-apps", () => {
  it("the gateway mounts each system's sub-app whole, in list order, and nothing of a system not listed", () => {
    const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
    const gateway = createApp(server.deps, systems).routes.map(key);
    let last = -1;
    for (const s of systems) {
      const own = s.routes(server.deps).routes.map(key);
      expect(own.length, s.name).toBeGreaterThan(0);
      for (const r of own) expect(gateway, `${s.name}: ${r}`).toContain(r);
      // A system's routes come after the previous system's (the list's order is the mount order).
      const first = gateway.indexOf(own[0]!);
      expect(first, s.name).toBeGreaterThan(last);
      last = gateway.lastIndexOf(own.at(-1)!);
    }
    const without = createApp(server.deps, dialogueSystems).routes.map(key);
    expect(without.filter((r) => r.includes("/v1/echo/"))).toEqual([]);
    expect(gateway.filter((r) => r.includes("/v1/echo/"))).toEqual([
      "POST /v1/echo/conversations",
      "POST /v1/echo/conversations/:id/messages",
      // Its inbox list (its contract's `inboxList`), served by the gateway's inbox routes.
      "GET /v1/echo/conversations",
    ]);
  });

  it("the role policy gates sub-app routes: chat, operator and admin; a new system's routes open to chat only as its contract documents", async () => {
    // No token: 401 on a system route and on a shared one.
    for (const [m, p] of [
      ["POST", "/v1/clinic/threads"],
      ["GET", "/v1/machines"],
    ] as const)
      expect((await errorOf(await call(m, p))).code, `${m} ${p}`).toBe("unauthorized");
    // chat: the conversation routes pass, operator routes do not.
    const created = await call("POST", "/v1/clinic/threads", "tok-chat");
    expect(created.status).toBe(201);
    const { threadId, conversationToken } = (await created.json()) as { threadId: string; conversationToken: string };
    // The thread is the creator's: its credential, not the shared chat token, opens it.
    expect((await call("GET", `/v1/clinic/threads/${threadId}`, "tok-chat")).status).toBe(404);
    const own = await fetch(`${server.url}/v1/clinic/threads/${threadId}`, {
      headers: { ...as("tok-chat"), "x-conversation-token": conversationToken },
    });
    expect(own.status).toBe(200);
    for (const [m, p] of [
      ["GET", "/v1/clinic/branches"],
      ["POST", `/v1/clinic/threads/${threadId}/release`],
      ["GET", "/v1/inbox/conversations"],
      ["GET", "/v1/machines"],
      ["GET", "/v1/evidence/tools"],
      ["GET", "/v1/echo/conversations"],
    ] as const) {
      const e = await errorOf(await call(m, p, "tok-chat"));
      expect(e.code, `chat ${m} ${p}`).toBe("forbidden");
      expect(e.details).toEqual({ required: "operator" });
    }
    // operator: reads settings and the knowledge base, may not write them.
    expect((await call("GET", "/v1/clinic/branches", "tok-op")).status).toBe(200);
    expect((await call("GET", "/v1/clinic/kb/documents", "tok-op")).status).toBe(200);
    const write = await errorOf(await call("POST", "/v1/clinic/kb/reindex", "tok-op"));
    expect(write).toMatchObject({ code: "forbidden", details: { required: "admin" } });
    // admin: the write goes through.
    const reindexed = await call("POST", "/v1/clinic/kb/reindex", "tok-admin");
    expect(reindexed.status).toBe(200);
    expect(await reindexed.json()).toMatchObject({ documents: expect.any(Number), chunks: expect.any(Number) });
    // The test-only system's sub-app knows nothing of roles; the gateway's policy, read from its
    // contract (its operations documented `role: "chat"`), still holds.
    expect((await call("POST", "/v1/echo/conversations", "tok-op")).status).toBe(201);
    expect((await call("POST", "/v1/echo/conversations", "tok-chat")).status).toBe(201);
  });

  it("errors thrown inside a sub-app keep the §6 body; body checks and the body limit apply to its routes", async () => {
    const missing = await call("GET", "/v1/clinic/threads/no-such-thread", "tok-chat");
    expect(missing.status).toBe(404);
    expect(await errorOf(missing)).toEqual({
      code: "not_found",
      message: "Такого диалога нет.",
      details: { reason: "conversation_not_found" },
    });

    const conv = await call("POST", "/v1/evidence/conversations", "tok-chat");
    const { conversationId } = (await conv.json()) as { conversationId: string };
    const empty = await call("POST", `/v1/evidence/conversations/${conversationId}/messages`, "tok-chat", "{}");
    expect(empty.status).toBe(400);
    expect((await errorOf(empty)).code).toBe("invalid_request");

    const deep = "[".repeat(100) + "]".repeat(100);
    const tooDeep = await call("POST", `/v1/evidence/conversations/${conversationId}/messages`, "tok-chat", deep);
    expect(tooDeep.status).toBe(400);
    expect((await errorOf(tooDeep)).message).toMatch(/глубже 64/);

    const big = JSON.stringify({ text: "а".repeat(5000) });
    const tooLarge = await call("POST", `/v1/evidence/conversations/${conversationId}/messages`, "tok-chat", big);
    expect(tooLarge.status).toBe(413);
    expect((await errorOf(tooLarge)).code).toBe("payload_too_large");

    // A shared group's sub-app (the inbox) and a test system's: the same body.
    expect(await errorOf(await call("GET", "/v1/inbox/conversations/nope", "tok-op"))).toEqual({
      code: "not_found",
      message: "Такого диалога нет.",
    });
    expect(
      (await errorOf(await call("POST", "/v1/echo/conversations/nope/messages", "tok-full", '{"text":"x"}'))).code,
    ).toBe("not_found");
  });

  it("request metrics label each sub-app route by its template, never by the ids in the path", async () => {
    const ids = ["id-7c1f3a", "id-9e2b44", "id-0d5a61"];
    const hits: [string, string, string][] = [
      ["GET", `/v1/clinic/threads/${ids[0]}`, "/v1/clinic/threads/:threadId"],
      ["GET", `/v1/clinic/kb/documents/${ids[1]}/chunks`, "/v1/clinic/kb/documents/:id/chunks"],
      ["GET", `/v1/workbench/interactions/${ids[2]}`, "/v1/workbench/interactions/:id"],
      ["GET", `/v1/evidence/runs/${ids[0]}`, "/v1/evidence/runs/:runId"],
      ["GET", `/v1/runs/${ids[1]}/stages`, "/v1/runs/:runId/stages"],
      ["GET", `/v1/inbox/conversations/${ids[2]}`, "/v1/inbox/conversations/:id"],
      ["GET", `/v1/conversations/${ids[0]}/replay`, "/v1/conversations/:conversationId/replay"],
      ["POST", `/v1/echo/conversations/${ids[1]}/messages`, "/v1/echo/conversations/:id/messages"],
    ];
    for (const [m, p] of hits) {
      const res = await call(m, p, "tok-full", m === "POST" ? '{"text":"x"}' : undefined);
      expect(res.status, `${m} ${p}`).toBe(404);
      await res.body?.cancel();
    }
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const labels = [...text.matchAll(/^ds_http_requests_total\{([^}]*)\}/gm)].map((m) => m[1]!);
    for (const [m, , route] of hits)
      expect(
        labels.some((l) => l.includes(`method="${m}"`) && l.includes(`route="${route}"`) && l.includes(`status="404"`)),
        route,
      ).toBe(true);
    for (const id of ids) expect(labels.filter((l) => l.includes(id))).toEqual([]);
  });
});
