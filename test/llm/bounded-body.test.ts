// Issue 35: every model call, streamed or not, is bounded in the bytes it reads (enforced while
// reading) and in idle time per attempt after the headers. A scripted OpenAI-compatible server
// on loopback sends a JSON body that never ends, or headers and part of a body and then silence.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createLlm, type Llm } from "../../llm/client";
import type { Role } from "../../llm/types";
import { scriptedLlmConfig, startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";

let s: ScriptedLlm;
let llm: Llm;
/** For the never-ending body: an idle timer far longer than reading the cap takes, even on a loaded machine. */
let patient: Llm;
const msgs = [{ role: "user" as const, content: "привет" }];
const IDLE_MS = 500;
const schema = z.object({ choice: z.string() });

beforeAll(async () => {
  s = await startScriptedLlm();
  llm = createLlm({
    ...scriptedLlmConfig(s),
    timeoutMs: IDLE_MS,
    retryDelayMs: 10,
    // a small cap so a never-ending body passes it quickly; a total deadline far above what the test allows
    limits: { maxReplyChars: 2_000, totalTimeoutMs: 60_000 },
  });
  patient = createLlm({
    ...scriptedLlmConfig(s),
    timeoutMs: 20_000,
    retryDelayMs: 10,
    limits: { maxReplyChars: 2_000, totalTimeoutMs: 60_000 },
  });
});
afterAll(() => s.close());

const ROLES: Role[] = ["router", "planner", "reranker", "classifier", "answer"];
const call = (role: Role, via = llm) =>
  role === "planner" || role === "reranker" ? via.structured(role, msgs, schema, "x") : via.complete(role, msgs);

describe("bounded model replies", () => {
  it.each(ROLES)("%s: a body that never ends fails on the cap while reading, without buffering it", async (role) => {
    s.reset();
    s.script(role, { content: "да ", endless: true });
    const before = process.memoryUsage().rss;
    const t0 = performance.now();
    const r = await call(role, patient);
    const ms = performance.now() - t0;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatchObject({ code: "model_unavailable", limit: "reply_too_long" });
    // the cap is 2,000 × 6 + 64 KB: the process did not grow by more than a few of those
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    expect(ms).toBeLessThan(10_000);
    expect(s.count(role)).toBe(1); // a reply over the cap is not retried
  });

  it.each(ROLES)("%s: a body that stalls after its headers ends the attempt on the idle timer", async (role) => {
    s.reset();
    s.script(role, { content: "ответ", stallAfter: 40 }, { content: "ответ", stallAfter: 40 });
    const t0 = performance.now();
    const r = await call(role);
    const ms = performance.now() - t0;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.code).toBe("model_unavailable");
    expect(!r.ok && r.error.message).toMatch(/no data for 500 ms|timed? ?out/i);
    // two attempts, each ended by the idle timer (not the 60 s total deadline)
    expect(s.count(role)).toBe(2);
    expect(ms).toBeLessThan(IDLE_MS * 2 + 2_000);
  });

  it("a whole reply within bounds still reads as before", async () => {
    s.reset();
    s.script("router", "new_booking");
    s.script("reranker", '{"choice":"c1"}');
    expect(await llm.complete("router", msgs)).toMatchObject({ ok: true, value: "new_booking" });
    expect(await llm.structured("reranker", msgs, schema, "x")).toMatchObject({ ok: true, value: { choice: "c1" } });
  });
});
