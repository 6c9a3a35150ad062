import { beforeAll, describe, expect, it } from "vitest";
import { headerProblems } from "../utils/openapi-headers";
import { useTestServer } from "../utils/server";
import { readSse } from "../utils/sse";

/**
 * Integrators' edges (issue 45): Retry-After on 409 conversation_busy and on every 503 (a draining
 * server's /v1 and /readyz), Idempotent-Replayed on a replayed run, X-Request-Id on the 204 of a
 * run's events — each response's headers checked against what /openapi.json declares for it.
 */
let doc: Record<string, any>;
const seen: { method: string; path: string; status: number; headers: Headers }[] = [];

const server = useTestServer({ llm: true });
const llm = server.llm;
beforeAll(async () => {
  doc = await (await fetch(`${server.url}/openapi.json`)).json();
});

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  seen.push({ method, path, status: res.status, headers: res.headers });
  return res;
}
const thread = async () =>
  ((await (await call("POST", "/v1/clinic/threads", {})).json()) as { threadId: string }).threadId;

describe("headers integrators rely on, as declared", () => {
  it("a replayed run says Idempotent-Replayed; a finished run's 204 has X-Request-Id", async () => {
    const id = await thread();
    llm.script("router", "general_info");
    llm.script("branch", "Мы работаем с 8 до 20.");
    const send = () =>
      call("POST", `/v1/clinic/threads/${id}/messages`, { text: "Часы?" }, { "idempotency-key": "k1" });
    const first = await send();
    const events = (await readSse(first)).events;
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await send();
    await again.text();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const runId = first.headers.get("x-run-id")!;
    const last = String(events.at(-1)!.id);
    const done = await call("GET", `/v1/runs/${runId}/events`, undefined, { "last-event-id": last });
    expect(done.status).toBe(204);
    expect(done.headers.get("x-request-id")).toBeTruthy();
  });

  it("409 conversation_busy and every 503 of a draining server carry Retry-After", async () => {
    const id = await thread();
    llm.script("router", "general_info");
    llm.script("branch", { content: "Очень медленный ответ. ".repeat(20), chunkDelayMs: 40 });
    const slow = await call("POST", `/v1/clinic/threads/${id}/messages`, { text: "Медленно" });
    const reading = readSse(slow);
    const busy = await call("POST", `/v1/clinic/threads/${id}/messages`, { text: "Второе" });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      "conversation_busy",
    );
    expect(Number(busy.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another conflict (a key reused for another body) is not "retry later": no Retry-After.
    const reused = await call(
      "POST",
      `/v1/clinic/threads/${id}/messages`,
      { text: "Часы?" },
      { "idempotency-key": "k1" },
    );
    expect(reused.status).toBe(409);
    expect(reused.headers.get("retry-after")).toBeNull();
    await reused.text();

    // Drain while the slow turn runs: new requests and the readiness probe are 503 with Retry-After.
    const draining = server.deps.turns.drain(10_000);
    const refused = await call("POST", "/v1/clinic/threads", {});
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    await refused.text();
    const ready = await call("GET", "/readyz");
    expect(ready.status).toBe(503);
    expect(Number(ready.headers.get("retry-after"))).toBeGreaterThan(0);
    await ready.text();
    expect((await reading).events.at(-1)?.event).toBe("done");
    await draining;
  });

  it("every header sent was declared, every required one sent", () => {
    expect(seen.length).toBeGreaterThan(8);
    expect(seen.flatMap((x) => headerProblems(doc, x))).toEqual([]);
  });
});
