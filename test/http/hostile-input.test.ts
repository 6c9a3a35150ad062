import { describe, expect, it } from "vitest";
import { jsonTooDeep } from "../../http/json-depth";
import { useTestServer } from "../utils/server";
import { postSse } from "../utils/sse";
import { registerTestRoutes } from "../utils/test-routes";
import { workspace } from "../systems/workbench/fixtures";
import { newConversation } from "../systems/workbench/http-workbench-helpers";

/**
 * Cheap hostile-input hardening (issue 18 item 8): a deeply nested body is a structured 400 (it
 * was a 500 from a recursive walk), Last-Event-ID must be a plain integer ("5abc" and a
 * 40-digit id are 400, not a guess or a database error), and tokens of any length are refused alike.
 */

const server = useTestServer({ tokens: "a:tok-a-secret", extend: registerTestRoutes });
const open = useTestServer({ over: server, extend: registerTestRoutes });

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

describe("hostile input", () => {
  it("jsonTooDeep counts nesting outside strings only", () => {
    expect(jsonTooDeep(nested(64))).toBe(false);
    expect(jsonTooDeep(nested(65))).toBe(true);
    expect(jsonTooDeep("[".repeat(65))).toBe(true);
    expect(jsonTooDeep(JSON.stringify({ s: "[[[[".repeat(100) + '\\"{{{' }))).toBe(false);
  });

  it("a 20,000-deep Workbench workspace is a 400 invalid_request, not a 500", async () => {
    const conv = await newConversation(open.url);
    // A valid workspace with one deeply nested extra field: the schema lets it through, the canonical hash recursed into it.
    const ws = JSON.stringify({ ...workspace, extra: "DEEP" }).replace('"DEEP"', nested(20_000));
    const body = `{"text":"Покажи композицию «Расчёт скидки»","workspace":${ws}}`;
    const r = await fetch(`${open.url}/v1/workbench/conversations/${conv}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "invalid_request",
    });
    // A body at the limit still gets past the depth check (then fails or passes on its schema, never 500).
    const ok = await fetch(`${open.url}/v1/test/conversations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: nested(10),
    });
    expect(ok.status).toBeLessThan(500);
  });

  it("Last-Event-ID must be a plain non-negative integer", async () => {
    const conv = (
      (await (await fetch(`${open.url}/v1/test/conversations`, { method: "POST" })).json()) as {
        conversationId: string;
      }
    ).conversationId;
    const r = await postSse(`${open.url}/v1/test/conversations/${conv}/messages`, { text: "привет" });
    const runId = (r.events[0]!.data as { runId: string }).runId;
    for (const bad of ["5abc", "-1", "1.5", "9".repeat(40), " ", "0x10"]) {
      const res = await fetch(`${open.url}/v1/runs/${runId}/events`, { headers: { "last-event-id": bad } });
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
    const good = await fetch(`${open.url}/v1/runs/${runId}/events`, { headers: { "last-event-id": "1" } });
    expect(good.status).toBe(200);
    await good.body?.cancel();
  });

  it("tokens: a prefix, a longer string and an empty one are refused; the token itself accepted", async () => {
    for (const bad of ["tok-a", "tok-a-secret-and-more", "x", ""]) {
      const res = await fetch(`${server.url}/v1/test/conversations`, {
        method: "POST",
        headers: { authorization: `Bearer ${bad}` },
      });
      expect(res.status, bad).toBe(401);
    }
    expect(
      (
        await fetch(`${server.url}/v1/test/conversations`, {
          method: "POST",
          headers: { authorization: "Bearer tok-a-secret" },
        })
      ).status,
    ).toBe(201);
  });
});
