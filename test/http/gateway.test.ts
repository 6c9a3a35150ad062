import { describe, expect, it } from "vitest";
import { OFFLINE_LABEL } from "../../llm/client";
import { useTestServer } from "../utils/server";
import { eventsNamed, postSse, readSse } from "../utils/sse";
import { registerTestRoutes } from "../utils/test-routes";

const A = { authorization: "Bearer tok-a" };
const B = { authorization: "Bearer tok-b" };

const server = useTestServer({
  llm: true,
  tokens: "a:tok-a,b:tok-b",
  env: { BODY_LIMIT_BYTES: "2048", RUN_DETACH_GRACE_MS: "0" },
  extend: registerTestRoutes,
});
const offline = useTestServer({ over: server, extend: registerTestRoutes });
const llm = server.llm;

async function newConversation(base: string, headers: Record<string, string>) {
  const r = await fetch(`${base}/v1/test/conversations`, { method: "POST", headers });
  expect(r.status).toBe(201);
  return ((await r.json()) as { conversationId: string }).conversationId;
}

describe("gateway", () => {
  it("serves /healthz and answers unknown paths with a JSON error", async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: "ok" });
    const r = await fetch(`${server.url}/v1/nope`, { headers: A });
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/json/);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("requires a bearer token and keeps tenants apart", async () => {
    const noAuth = await fetch(`${server.url}/v1/test/conversations`, { method: "POST" });
    expect(noAuth.status).toBe(401);
    expect(((await noAuth.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const wrong = await fetch(`${server.url}/v1/test/conversations`, {
      method: "POST",
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.status).toBe(401);

    const id = await newConversation(server.url, A);
    llm.script("answer", "секрет тенанта А");
    const turn = await postSse(`${server.url}/v1/test/conversations/${id}/messages`, { text: "привет" }, A);
    const runId = eventsNamed(turn, "run_started")[0]!.runId as string;

    const read = await fetch(`${server.url}/v1/test/conversations/${id}`, { headers: B });
    expect(read.status).toBe(404);
    const post = await postSse(`${server.url}/v1/test/conversations/${id}/messages`, { text: "дай" }, B);
    expect(post.status).toBe(404);
    expect((post.json as { error: { code: string } }).error.code).toBe("not_found");
    const follow = await fetch(`${server.url}/v1/runs/${runId}/events`, { headers: B });
    expect(follow.status).toBe(404);
    const mine = await fetch(`${server.url}/v1/test/conversations/${id}`, { headers: A });
    expect(((await mine.json()) as { messages: unknown[] }).messages).toHaveLength(2);
  });

  it("rejects bad input with structured errors and stores nothing", async () => {
    const id = await newConversation(server.url, A);
    const bad = await postSse(`${server.url}/v1/test/conversations/${id}/messages`, { text: 5 }, A);
    expect(bad.status).toBe(400);
    expect((bad.json as { error: { code: string; message: string } }).error).toMatchObject({ code: "invalid_request" });
    const notJson = await fetch(`${server.url}/v1/test/conversations/${id}/messages`, {
      method: "POST",
      headers: { ...A, "content-type": "application/json" },
      body: "{oops",
    });
    expect(notJson.status).toBe(400);
    const big = await fetch(`${server.url}/v1/test/conversations/${id}/messages`, {
      method: "POST",
      headers: { ...A, "content-type": "application/json" },
      body: JSON.stringify({ text: "я".repeat(5000) }),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    // Without a declared length (chunked): counted as it is read.
    const body = new TextEncoder().encode(JSON.stringify({ text: "я".repeat(5000) }));
    const chunked = await fetch(`${server.url}/v1/test/conversations/${id}/messages`, {
      method: "POST",
      headers: { ...A, "content-type": "application/json" },
      body: new ReadableStream({
        start: (c) => (c.enqueue(body.slice(0, 100)), c.enqueue(body.slice(100)), c.close()),
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    const conv = (await (await fetch(`${server.url}/v1/test/conversations/${id}`, { headers: A })).json()) as {
      messages: unknown[];
    };
    expect(conv.messages).toHaveLength(0);
  });

  it("streams a turn: run_started, tokens, final, done with increasing ids", async () => {
    const id = await newConversation(server.url, A);
    llm.reset();
    llm.script("answer", "Добрый день, чем помочь?");
    const r = await postSse(`${server.url}/v1/test/conversations/${id}/messages`, { text: "здравствуйте" }, A);
    expect(r.headers.get("content-type")).toMatch(/text\/event-stream/);
    const names = r.events.map((e) => e.event);
    expect(names[0]).toBe("run_started");
    expect(names.at(-1)).toBe("done");
    expect(names.at(-2)).toBe("final");
    expect(
      eventsNamed(r, "token")
        .map((e) => e.delta)
        .join(""),
    ).toBe("Добрый день, чем помочь?");
    const ids = r.events.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(llm.calls[0]!.model).toBe("test-answer");
    expect(llm.calls[0]!.stream).toBe(true);
  });

  it("a model answering 500 is called exactly twice, then the turn fails with model_unavailable and leaves no trace", async () => {
    const id = await newConversation(server.url, A);
    llm.reset();
    llm.script("answer", { status: 500 }, { status: 500 }, "не должен быть вызван");
    const r = await postSse(`${server.url}/v1/test/conversations/${id}/messages`, { text: "ау" }, A);
    expect(llm.count("answer")).toBe(2);
    expect(eventsNamed(r, "error")[0]).toMatchObject({ code: "model_unavailable" });
    expect(r.events.at(-1)!.event).toBe("done");
    const conv = (await (await fetch(`${server.url}/v1/test/conversations/${id}`, { headers: A })).json()) as {
      messages: unknown[];
    };
    expect(conv.messages).toHaveLength(0);
    const runId = eventsNamed(r, "run_started")[0]!.runId as string;
    const [run] = await server.db.sql`select status, error_code from runs where id = ${runId}`;
    expect(run).toEqual({ status: "failed", error_code: "model_unavailable" });
  });

  it("one 500 then success: the single retry recovers the turn", async () => {
    const id = await newConversation(server.url, A);
    llm.reset();
    llm.script("answer", { status: 503 }, "со второй попытки");
    const r = await postSse(`${server.url}/v1/test/conversations/${id}/messages`, { text: "ау" }, A);
    expect(llm.count("answer")).toBe(2);
    expect(eventsNamed(r, "final")[0]).toMatchObject({ answer: "со второй попытки" });
  });

  it("the offline provider streams a labelled answer", async () => {
    const id = await newConversation(offline.url, {});
    const r = await postSse(`${offline.url}/v1/test/conversations/${id}/messages`, { text: "как дела?" }, {});
    const text = eventsNamed(r, "token")
      .map((e) => e.delta)
      .join("");
    expect(eventsNamed(r, "token").length).toBeGreaterThan(3);
    expect(text.startsWith(OFFLINE_LABEL)).toBe(true);
    expect(eventsNamed(r, "final")[0]!.answer).toBe(text);
  });

  it("stops work promptly when the client disconnects, and stores nothing of the turn", async () => {
    const id = await newConversation(server.url, A);
    llm.reset();
    llm.script("answer", { content: "очень длинный ответ ".repeat(40), chunkDelayMs: 30 });
    const controller = new AbortController();
    const res = await fetch(`${server.url}/v1/test/conversations/${id}/messages`, {
      method: "POST",
      headers: { ...A, "content-type": "application/json" },
      body: JSON.stringify({ text: "давай" }),
      signal: controller.signal,
    });
    let runId = "";
    await readSse(res, {
      stopAfter: (e, all) => {
        if (e.event === "run_started") runId = (e.data as { runId: string }).runId;
        return all.filter((x) => x.event === "token").length >= 3;
      },
    }).catch(() => {});
    controller.abort();
    const started = Date.now();
    let status = "running";
    while (status === "running" && Date.now() - started < 3000) {
      await new Promise((r) => setTimeout(r, 50));
      status = ((await server.db.sql`select status from runs where id = ${runId}`)[0] as { status: string }).status;
    }
    expect(status).toBe("failed");
    expect(Date.now() - started).toBeLessThan(2000);
    const conv = (await (await fetch(`${server.url}/v1/test/conversations/${id}`, { headers: A })).json()) as {
      messages: unknown[];
    };
    expect(conv.messages).toHaveLength(0);
  });
});
