import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createLlm, OFFLINE_LABEL, type Llm } from "../../llm/client";
import { scriptedLlmConfig, startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";

let s: ScriptedLlm;
let llm: Llm;
const msgs = [{ role: "user" as const, content: "привет" }];

beforeAll(async () => {
  s = await startScriptedLlm();
  llm = createLlm({ ...scriptedLlmConfig(s), timeoutMs: 800 });
});
afterAll(() => s.close());

describe("openai client", () => {
  it("names the role's model in every request", async () => {
    s.reset();
    s.script("router", "new_booking");
    const r = await llm.complete("router", msgs);
    expect(r).toMatchObject({ ok: true, value: "new_booking", meta: { attempts: 1, model: "test-router" } });
    expect(s.calls[0]!.model).toBe("test-router");
  });

  it("asks for structured output with response_format json_schema and validates it", async () => {
    s.reset();
    const schema = z.object({ choice: z.string() });
    s.script("reranker", '{"choice": "c2"}', "not json at all", '{"pick": 1}');
    expect(await llm.structured("reranker", msgs, schema, "rerank")).toMatchObject({
      ok: true,
      value: { choice: "c2" },
    });
    const rf = s.calls[0]!.body.response_format as {
      type: string;
      json_schema: { name: string; schema: { properties: object } };
    };
    expect(rf.type).toBe("json_schema");
    expect(rf.json_schema.schema.properties).toHaveProperty("choice");
    expect(await llm.structured("reranker", msgs, schema, "rerank")).toMatchObject({
      ok: false,
      error: { code: "invalid_output" },
    });
    expect(await llm.structured("reranker", msgs, schema, "rerank")).toMatchObject({
      ok: false,
      error: { code: "invalid_output" },
    });
    // Invalid output is an answer, not a failure: never retried.
    expect(s.count("reranker")).toBe(3);
  });

  it("retries exactly once on 5xx and on a dropped connection, never on 4xx", async () => {
    s.reset();
    s.script("answer", { status: 500 }, { status: 502 });
    expect(await llm.complete("answer", msgs)).toMatchObject({
      ok: false,
      error: { code: "model_unavailable" },
      meta: { attempts: 2 },
    });
    s.script("answer", { hangUp: true }, "после обрыва");
    expect(await llm.complete("answer", msgs)).toMatchObject({
      ok: true,
      value: "после обрыва",
      meta: { attempts: 2 },
    });
    s.script("answer", { status: 400 });
    expect(await llm.complete("answer", msgs)).toMatchObject({ ok: false, meta: { attempts: 1 } });
    expect(s.count("answer")).toBe(5);
  });

  it("times out a silent endpoint and reports model_unavailable", async () => {
    s.reset();
    s.script("answer", { content: "поздно", delayMs: 1500 }, { content: "поздно", delayMs: 1500 });
    const started = Date.now();
    const r = await llm.complete("answer", msgs);
    expect(r).toMatchObject({ ok: false, error: { code: "model_unavailable" }, meta: { attempts: 2 } });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("streams deltas; a stream cut after the first delta is final (no duplicated tokens)", async () => {
    s.reset();
    const deltas: string[] = [];
    s.script("answer", "Раз, два, три — поехали!");
    const ok = await llm.stream("answer", msgs, { onDelta: (d) => deltas.push(d) });
    expect(ok).toMatchObject({ ok: true, value: "Раз, два, три — поехали!" });
    expect(deltas.join("")).toBe("Раз, два, три — поехали!");
    expect(deltas.length).toBeGreaterThan(1);
    s.script("answer", { content: "начало и внезапный обрыв соединения", truncateAfter: 10 });
    const cut: string[] = [];
    const r = await llm.stream("answer", msgs, { onDelta: (d) => cut.push(d) });
    expect(r).toMatchObject({ ok: false, error: { code: "model_unavailable" }, meta: { attempts: 1 } });
    expect(cut.join("").length).toBeGreaterThan(0);
  });

  it("cancels when the caller's signal aborts", async () => {
    s.reset();
    s.script("answer", { content: "долгий ответ ".repeat(50), chunkDelayMs: 20 });
    const ac = new AbortController();
    const deltas: string[] = [];
    const p = llm.stream("answer", msgs, {
      signal: ac.signal,
      onDelta: (d) => {
        deltas.push(d);
        if (deltas.length === 3) ac.abort();
      },
    });
    expect(await p).toMatchObject({ ok: false, error: { code: "cancelled" } });
    expect(deltas.length).toBeLessThan(10);
  });
});

describe("openai client: limits (issue 18 items 1, 4)", () => {
  const limited = () =>
    createLlm({
      ...scriptedLlmConfig(s),
      timeoutMs: 800,
      limits: { maxReplyChars: 100, totalTimeoutMs: 5_000 },
      roleLimits: { branch: { maxReplyChars: 20 }, router: { totalTimeoutMs: 300 } },
    });

  it("a streamed reply past the cap fails at the cap, once, not retried; a per-role cap overrides", async () => {
    s.reset();
    const l = limited();
    s.script("answer", { content: "x".repeat(500), chunkChars: 7 }, "не вызывается");
    const seen: string[] = [];
    const r = await l.stream("answer", msgs, { onDelta: (d) => seen.push(d) });
    expect(r).toMatchObject({
      ok: false,
      error: { code: "model_unavailable", limit: "reply_too_long" },
      meta: { attempts: 1 },
    });
    expect(seen.join("").length).toBeLessThanOrEqual(100);
    s.script("branch", "двадцать один символ!");
    expect(await l.stream("branch", msgs, { onDelta: () => {} })).toMatchObject({
      ok: false,
      error: { limit: "reply_too_long" },
    });
    s.script("answer", "x".repeat(100));
    expect(await l.stream("answer", msgs, { onDelta: () => {} })).toMatchObject({ ok: true });
    expect(s.count("answer")).toBe(2);
  });

  it("a whole (non-streamed) reply past the cap fails too", async () => {
    s.reset();
    s.script("branch", "x".repeat(21));
    expect(await limited().complete("branch", msgs)).toMatchObject({
      ok: false,
      error: { limit: "reply_too_long" },
      meta: { attempts: 1 },
    });
  });

  it("one SSE line longer than the cap allows fails the stream (the buffer never grows past it)", async () => {
    s.reset();
    s.script("answer", { content: "ok", rawChunk: `{"choices":[{"delta":{"content":"${"y".repeat(20_000)}"}}]}` });
    expect(await limited().stream("answer", msgs, { onDelta: () => {} })).toMatchObject({
      ok: false,
      error: { limit: "reply_too_long" },
    });
  });

  it("the total deadline covers both attempts and the retry pause", async () => {
    s.reset();
    // Each attempt would time out at 800 ms; the router's total deadline (300 ms) ends the call first.
    s.script("router", { content: "поздно", delayMs: 2_000 }, { content: "поздно", delayMs: 2_000 });
    const started = Date.now();
    const r = await limited().complete("router", msgs);
    expect(r).toMatchObject({
      ok: false,
      error: { code: "model_unavailable", limit: "total_timeout" },
      meta: { attempts: 1 },
    });
    expect(Date.now() - started).toBeLessThan(700);
  });

  it("a caller's signal gets no listener left behind by a call", async () => {
    s.reset();
    s.script("answer", "ответ");
    const ac = new AbortController();
    const added: unknown[] = [];
    const add = ac.signal.addEventListener.bind(ac.signal);
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.addEventListener = ((type: string, l: never, o?: never) => (added.push(l), add(type, l, o))) as never;
    ac.signal.removeEventListener = ((type: string, l: never, o?: never) => (
      added.splice(added.indexOf(l), 1),
      remove(type, l, o)
    )) as never;
    expect(await limited().stream("answer", msgs, { signal: ac.signal, onDelta: () => {} })).toMatchObject({
      ok: true,
    });
    expect(added).toEqual([]);
  });
});

describe("offline provider", () => {
  it("labels text answers and gives structured roles no opinion", async () => {
    const off = createLlm({});
    expect(off.offline).toBe(true);
    const r = await off.complete("answer", msgs);
    expect(r.ok && r.value.startsWith(OFFLINE_LABEL)).toBe(true);
    expect(await off.structured("planner", msgs, z.object({ tasks: z.array(z.unknown()) }), "plan")).toMatchObject({
      ok: false,
      error: { code: "invalid_output" },
    });
  });
});
