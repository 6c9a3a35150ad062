// What the OpenAPI document declares a client must send or expect (issue 34): Idempotency-Key on
// every run-starting POST, X-Run-Id / X-Conversation-Id on its stream, X-Request-Id on every
// response, 403 and 503 on every /v1 operation — and that the routes do what is declared.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";

type Op = {
  operationId?: string;
  parameters?: { name: string; in: string }[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>;
};
let doc: { paths: Record<string, Record<string, Op>> };
const server = useTestServer();
beforeAll(async () => {
  doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof doc;
});

const ops = () =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
// A run's event stream is a typed schema; a plain `text/event-stream` (the MCP endpoint's) is not a run.
const startsRun = (method: string, op: Op) =>
  method === "post" &&
  Object.values(op.responses).some(
    (r) => (r.content?.["text/event-stream"] as { schema?: { $ref?: string } } | undefined)?.schema?.$ref,
  );

describe("the OpenAPI document declares what a client needs", () => {
  it("Idempotency-Key and the run's ids on every run-starting POST", () => {
    const starting = ops().filter(({ method, op }) => startsRun(method, op));
    expect(starting.map((o) => o.path).sort()).toEqual(
      expect.arrayContaining([
        "/v1/clinic/threads/{threadId}/messages",
        "/v1/evidence/conversations/{id}/messages",
        "/v1/workbench/conversations/{id}/messages",
      ]),
    );
    for (const { path, op } of starting) {
      expect(
        op.parameters?.some((p) => p.name === "Idempotency-Key" && p.in === "header"),
        path,
      ).toBe(true);
      expect(Object.keys(op.responses["200"]!.headers ?? {}), path).toEqual(
        expect.arrayContaining(["X-Run-Id", "X-Conversation-Id", "X-Request-Id"]),
      );
    }
  });

  it("403 and 503 on every /v1 operation, X-Request-Id on every response", () => {
    for (const { path, method, op } of ops()) {
      if (!path.startsWith("/v1/") || (op as { "x-undocumented"?: boolean })["x-undocumented"]) continue;
      expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(["403", "503"]));
      for (const [status, r] of Object.entries(op.responses))
        expect(Object.keys(r.headers ?? {}), `${method} ${path} ${status}`).toContain("X-Request-Id");
    }
  });

  it.each([
    ["/v1/clinic/threads", "threadId", (id: string) => `/v1/clinic/threads/${id}/messages`, "Здравствуйте"],
    [
      "/v1/workbench/conversations",
      "conversationId",
      (id: string) => `/v1/workbench/conversations/${id}/messages`,
      "Покажи форму «Отгрузка»",
    ],
    [
      "/v1/evidence/conversations",
      "conversationId",
      (id: string) => `/v1/evidence/conversations/${id}/messages`,
      "Сальдо по Логистик Плюс на 10.04.2026",
    ],
  ])("the route does what is declared: %s", async (create, field, messages, text) => {
    const id = ((await (await fetch(`${server.url}${create}`, { method: "POST" })).json()) as Record<string, string>)[
      field
    ]!;
    const send = async () => {
      const r = await fetch(`${server.url}${messages(id)}`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": `k-${create}` },
        body: JSON.stringify({ text }),
      });
      await r.text();
      return r;
    };
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-run-id")).toBeTruthy();
    expect(first.headers.get("x-conversation-id")).toBe(id);
    expect(first.headers.get("x-request-id")).toBeTruthy();
    // the same key and body: the same run, replayed
    const again = await send();
    expect(again.headers.get("x-run-id")).toBe(first.headers.get("x-run-id"));
  });
});
