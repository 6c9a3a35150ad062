import { createServer, type Server } from "node:http";
import type { z } from "zod";
import { createOpenAiLlm } from "../llm/openai-client";
import { parseStructured } from "../llm/structured";
import { modelRoles } from "../driver/system";
import type { ChatMessage, Llm, LlmResult, Role } from "../llm/types";
import { dialogueSystems } from "../systems";
import { listenLoopback } from "./loopback";

/**
 * The benchmarks' scripted model, one script behind three transports: an in-process
 * OpenAI-compatible `fetch` (instant: the `openai` client parses a real chat-completions
 * stream, no socket), a loopback HTTP server (the same bytes over TCP), and a direct `Llm`
 * without the client at all. Their differences are the model client's share of a turn.
 */
export interface ChatRequest {
  model: string;
  stream?: boolean;
  messages: ChatMessage[];
  response_format?: unknown;
}

/** A reply: whole text (streamed word by word) or tokens produced lazily, one per read. */
export type Reply = string | { tokens: AsyncIterable<string> };
export type Script = (role: string, req: ChatRequest) => Reply;

export const roleOf = (model: string) => model.replace(/^bench-/, "");
export const benchRoleModels = () =>
  Object.fromEntries(modelRoles(dialogueSystems).map((r) => [r, `bench-${r}`])) as Record<Role, string>;

/** A server's model settings for the loopback model: each role its own name (benchRoleModels), `other` for the rest. */
export const loopbackModelEnv = (baseURL: string, other = "bench-answer"): Record<string, string> => ({
  OPENAI_BASE_URL: baseURL,
  OPENAI_API_KEY: "bench",
  LLM_MODEL: other,
  ...Object.fromEntries(Object.entries(benchRoleModels()).map(([r, m]) => [`LLM_MODEL_${r.toUpperCase()}`, m])),
});

/**
 * A measured server process's environment: the loopback model, no API tokens, runs that end with
 * their stream (no detach grace), and no debug or chatty logging to skew CPU and memory.
 */
export const quietServerEnv = (baseURL: string): Record<string, string> => ({
  ...loopbackModelEnv(baseURL),
  API_TOKENS: "",
  RUN_DETACH_GRACE_MS: "0",
  AI_DEBUG: "false",
  LOG_LEVEL: "warn",
});

const enc = new TextEncoder();
const created = Math.floor(Date.now() / 1000);
const splitWords = (text: string) => text.match(/\S+\s*|\s+/g) ?? [];

function chunk(model: string, delta: object, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

function completion(model: string, content: string): string {
  return JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created,
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
}

/** The chat-completions SSE body of a reply: one buffer for whole text, a pull stream for lazy tokens. */
export function streamBody(model: string, reply: Reply): ReadableStream<Uint8Array> {
  const head = chunk(model, { role: "assistant", content: "" });
  const tail = chunk(model, {}, "stop") + "data: [DONE]\n\n";
  if (typeof reply === "string") {
    const body = enc.encode(
      head +
        splitWords(reply)
          .map((t) => chunk(model, { content: t }))
          .join("") +
        tail,
    );
    return new ReadableStream({
      start(c) {
        c.enqueue(body);
        c.close();
      },
    });
  }
  const it = reply.tokens[Symbol.asyncIterator]();
  let started = false;
  return new ReadableStream({
    async pull(c) {
      if (!started) {
        started = true;
        c.enqueue(enc.encode(head));
      }
      const n = await it.next();
      if (n.done) {
        c.enqueue(enc.encode(tail));
        c.close();
      } else c.enqueue(enc.encode(chunk(model, { content: n.value })));
    },
    async cancel() {
      await it.return?.();
    },
  });
}

async function whole(reply: Reply): Promise<string> {
  if (typeof reply === "string") return reply;
  let s = "";
  for await (const t of reply.tokens) s += t;
  return s;
}

/** An OpenAI-compatible endpoint as a `fetch` function: no socket, no delay. */
export function instantFetch(script: Script): typeof fetch {
  return (async (_url: unknown, init?: RequestInit) => {
    const req = JSON.parse(String(init?.body ?? "{}")) as ChatRequest;
    const reply = script(roleOf(req.model), req);
    if (req.stream)
      return new Response(streamBody(req.model, reply), {
        status: 200,
        headers: { "content-type": "text/event-stream" },
      });
    return new Response(completion(req.model, await whole(reply)), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }) as typeof fetch;
}

/**
 * How a loopback model delivers a whole-text reply's stream: `none` = every chunk in one socket
 * write (the engine reads the reply in one piece), `tick` = each chunk its own write, one
 * event-loop turn apart (tokens arrive separately, as from a real model, with no wall-clock
 * delay; the peer harness's default). Lazily produced tokens are always written one by one.
 */
export type Pacing = "none" | "tick";

const tick = () => new Promise<void>((r) => setImmediate(r));

/** A whole-text reply as lazily produced tokens, one event-loop turn apart. */
function ticked(text: string): Reply {
  const words = splitWords(text);
  return {
    tokens: (async function* () {
      for (let i = 0; i < words.length; i++) {
        if (i > 0) await tick();
        yield words[i]!;
      }
    })(),
  };
}

/** The same script on a loopback HTTP server. */
export async function startLoopbackModel(
  script: Script,
  pacing: Pacing = "none",
): Promise<{ baseURL: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    const body = JSON.parse(raw) as ChatRequest;
    const reply = script(roleOf(body.model), body);
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(completion(body.model, await whole(reply)));
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const reader = streamBody(
      body.model,
      pacing === "tick" && typeof reply === "string" ? ticked(reply) : reply,
    ).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
    res.end();
  });
  server.keepAliveTimeout = 60_000;
  const { url, close } = await listenLoopback(server);
  return { baseURL: `${url}/v1`, close };
}

export function instantLlm(script: Script): Llm {
  return createOpenAiLlm({
    baseURL: "http://instant.model.invalid/v1",
    apiKey: "bench",
    roleModels: benchRoleModels(),
    fetch: instantFetch(script),
    retryDelayMs: 0,
  });
}

export function loopbackLlm(baseURL: string): Llm {
  return createOpenAiLlm({ baseURL, apiKey: "bench", roleModels: benchRoleModels(), retryDelayMs: 0 });
}

/** The model with no client at all: what the engine costs by itself. */
export function directLlm(script: Script): Llm {
  const meta = (role: Role) => ({
    role,
    model: `bench-${role}`,
    attempts: 1,
    durationMs: 0,
    promptChars: 0,
    offline: false,
  });
  const ok = <T>(role: Role, value: T): LlmResult<T> => ({ ok: true, value, meta: meta(role) });
  return {
    offline: false,
    modelFor: (role) => `bench-${role}`,
    async complete(role, messages) {
      return ok(role, await whole(script(role, { model: `bench-${role}`, messages })));
    },
    async stream(role, messages, opts) {
      const reply = script(role, { model: `bench-${role}`, messages, stream: true });
      let text = "";
      const tokens = typeof reply === "string" ? splitWords(reply) : reply.tokens;
      for await (const t of tokens) {
        text += t;
        opts.onDelta(t);
      }
      return ok(role, text);
    },
    async structured<S extends z.ZodType>(role: Role, messages: ChatMessage[], schema: S) {
      const content = await whole(script(role, { model: `bench-${role}`, messages, response_format: {} }));
      const value = parseStructured(content, schema);
      return value === null
        ? { ok: false, error: { code: "invalid_output", message: content.slice(0, 100) }, meta: meta(role) }
        : ok(role, value);
    },
  };
}
