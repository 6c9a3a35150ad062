import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { createOpenAiLlm } from "../../llm/openai-client";
import { reuseRequestHeaders } from "../../llm/sdk-headers";

/** A fetch that records each request's headers (lower-cased names) and answers a chat completion. */
function recordingFetch() {
  const seen: Record<string, string>[] = [];
  /** Whether the SDK built the headers for this request (a Headers) or handed out the copy (a plain object). */
  const built: boolean[] = [];
  const f = (async (_url: string | URL | Request, init?: RequestInit) => {
    built.push(init?.headers instanceof Headers);
    const h: Record<string, string> = {};
    new Headers(init?.headers as HeadersInit).forEach((v, k) => (h[k] = v));
    seen.push(h);
    const body = JSON.stringify({ choices: [{ message: { content: "ok" } }] });
    return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  return { f, seen, built };
}

const ask = (c: OpenAI, extra?: { headers?: Record<string, string> }) =>
  c.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }, extra);

describe("request headers the SDK built once (issue 46)", () => {
  it("every call carries exactly the headers the SDK alone sends, the first and the later ones", async () => {
    const plain = recordingFetch();
    const reused = recordingFetch();
    const a = new OpenAI({ apiKey: "sk-test-123456", baseURL: "http://model.test/v1", maxRetries: 0, fetch: plain.f });
    const b = new OpenAI({ apiKey: "sk-test-123456", baseURL: "http://model.test/v1", maxRetries: 0, fetch: reused.f });
    reuseRequestHeaders(b);
    for (let i = 0; i < 3; i++) {
      await ask(a);
      await ask(b);
    }
    expect(reused.seen).toHaveLength(3);
    expect(plain.built).toEqual([true, true, true]);
    expect(reused.built).toEqual([false, false, false]);
    for (let i = 0; i < 3; i++) expect(reused.seen[i]).toEqual(plain.seen[i]);
    expect(reused.seen[0]!.authorization).toBe("Bearer sk-test-123456");
    expect(reused.seen[0]!["content-type"]).toBe("application/json");
  });

  it("a request with headers of its own is built by the SDK as before, and does not change the next one", async () => {
    const { f, seen, built } = recordingFetch();
    const c = new OpenAI({ apiKey: "sk-test-123456", baseURL: "http://model.test/v1", maxRetries: 0, fetch: f });
    reuseRequestHeaders(c);
    await ask(c);
    await ask(c, { headers: { "X-Trace": "t1" } });
    await ask(c);
    expect(seen[1]!["x-trace"]).toBe("t1");
    expect(built).toEqual([false, true, false]);
    expect(seen[2]).toEqual(seen[0]);
    expect(seen[2]!["x-trace"]).toBeUndefined();
  });

  it("a copy per request: what one request's transport adds is not sent by the next", async () => {
    const seen: Record<string, string>[] = [];
    const f = (async (_u: string | URL | Request, init?: RequestInit) => {
      const h = init!.headers as Record<string, string>;
      seen.push({ ...h });
      h["x-added-by-transport"] = "1";
      return new Response(JSON.stringify({ choices: [{ message: { content: "ok" } }] }), { status: 200 });
    }) as typeof fetch;
    const llm = createOpenAiLlm({ baseURL: "http://model.test/v1", apiKey: "sk-test-123456", model: "m", fetch: f });
    expect((await llm.complete("router", [{ role: "user", content: "a" }])).ok).toBe(true);
    expect((await llm.complete("router", [{ role: "user", content: "b" }])).ok).toBe(true);
    expect(seen).toHaveLength(2);
    expect(seen[1]!["x-added-by-transport"]).toBeUndefined();
    expect(seen[1]!.authorization).toBe("Bearer sk-test-123456");
  });
});
