import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLlm } from "../../llm/client";
import { retryAfterMs } from "../../llm/openai-client";
import { scriptedLlmConfig, startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";

let s: ScriptedLlm;
const msgs = [{ role: "user" as const, content: "привет" }];
// retryDelayMs 10 (the scripted config): any pause near the header's value is the header's doing.
const llm = () => createLlm({ ...scriptedLlmConfig(s), timeoutMs: 2_000, limits: { totalTimeoutMs: 3_000 } });
const gap = () => s.calls[1]!.at - s.calls[0]!.at;

beforeAll(async () => {
  s = await startScriptedLlm();
});
afterAll(() => s.close());

describe("Retry-After on a 429", () => {
  it("reads retry-after-ms, retry-after in seconds and as an HTTP date", () => {
    const err = (h: Record<string, string>) => new OpenAI.APIError(429, {}, "rate", new Headers(h));
    expect(retryAfterMs(err({ "retry-after-ms": "1500" }))).toBe(1500);
    expect(retryAfterMs(err({ "retry-after-ms": "250", "retry-after": "9" }))).toBe(250);
    expect(retryAfterMs(err({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(err({ "retry-after": "0.5" }))).toBe(500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(err({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now)).toBe(3000);
    expect(retryAfterMs(err({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }), now)).toBe(0);
    expect(retryAfterMs(err({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(err({}))).toBeUndefined();
    expect(retryAfterMs(new Error("x"))).toBeUndefined();
  });

  it("waits what retry-after (seconds) asks before the one retry, then answers", async () => {
    s.reset();
    s.script("answer", { status: 429, headers: { "retry-after": "1" } }, "ответ");
    const r = await llm().complete("answer", msgs);
    expect(r).toMatchObject({ ok: true, value: "ответ", meta: { attempts: 2 } });
    expect(gap()).toBeGreaterThanOrEqual(980);
    expect(gap()).toBeLessThan(1_800);
  });

  it("waits what retry-after-ms asks, on a stream too", async () => {
    s.reset();
    s.script("answer", { status: 429, headers: { "retry-after-ms": "600" } }, "поток");
    let text = "";
    const r = await llm().stream("answer", msgs, { onDelta: (d) => (text += d) });
    expect(r).toMatchObject({ ok: true, meta: { attempts: 2 } });
    expect(text).toBe("поток");
    expect(gap()).toBeGreaterThanOrEqual(580);
    expect(gap()).toBeLessThan(1_400);
  });

  it("an HTTP-date retry-after is honoured", async () => {
    s.reset();
    // Whole seconds only in an HTTP date: ask for the second after next.
    const when = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2000);
    s.script("answer", { status: 429, headers: { "retry-after": when.toUTCString() } }, "дата");
    const r = await llm().complete("answer", msgs);
    expect(r).toMatchObject({ ok: true, value: "дата" });
    expect(s.calls[1]!.at).toBeGreaterThanOrEqual(when.getTime() - 20);
    expect(s.calls[1]!.at - when.getTime()).toBeLessThan(500);
  });

  it("a retry-after past the role's total deadline fails at once with model_unavailable, no retry", async () => {
    s.reset();
    s.script("answer", { status: 429, headers: { "retry-after": "60" } }, "не дождались");
    const started = Date.now();
    const r = await llm().complete("answer", msgs);
    expect(Date.now() - started).toBeLessThan(500);
    expect(r).toMatchObject({ ok: false, error: { code: "model_unavailable" }, meta: { attempts: 1 } });
    if (!r.ok) expect(r.error.message).toContain("retry after 60000 ms");
    expect(s.count("answer")).toBe(1);
  });

  it("without the header the short fixed pause stays", async () => {
    s.reset();
    s.script("answer", { status: 429 }, "сразу");
    const r = await llm().complete("answer", msgs);
    expect(r).toMatchObject({ ok: true, value: "сразу", meta: { attempts: 2 } });
    expect(gap()).toBeLessThan(300);
  });
});
