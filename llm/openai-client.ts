import OpenAI from "openai";
import type { z } from "zod";
import { SseDataReader } from "./sse-data";
import { parseStructured, responseFormat } from "./structured";
import type { CallMeta, CallOptions, ChatMessage, Llm, LlmError, LlmResult, Role, StreamOptions } from "./types";

export interface OpenAiLlmOptions {
  baseURL: string;
  apiKey: string;
  model?: string;
  roleModels?: Partial<Record<Role, string | undefined>>;
  timeoutMs?: number;
  /** Pause before the single retry; small, since a patient is waiting. */
  retryDelayMs?: number;
  fetch?: typeof fetch;
}

/** Errors worth the one retry: the network, a timeout, 408/429 and 5xx. */
function retryable(e: unknown): boolean {
  if (e instanceof OpenAI.APIUserAbortError) return false;
  if (e instanceof OpenAI.APIConnectionError) return true; // includes timeouts
  if (e instanceof OpenAI.APIError) return e.status === undefined || e.status === 408 || e.status === 429 || e.status >= 500;
  return e instanceof TypeError; // fetch's network failures
}

function describe(e: unknown): string {
  if (e instanceof OpenAI.APIError) return `${e.status ?? "network"}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * Error text from a provider may repeat the credentials it was sent ("incorrect API key
 * sk-…"); it goes on into stages, logs and stored events, so the key never does.
 */
export function redact(text: string, apiKey: string): string {
  let out = apiKey.length >= 8 ? text.split(apiKey).join("***") : text;
  out = out.replace(/(Bearer\s+)[^\s"',;]+/gi, "$1***").replace(/\bsk-[A-Za-z0-9_-]{6,}/g, "sk-***");
  return out;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

/** One `openai` client for every role; the role picks the model name (LLM_MODEL_<ROLE>). */
export function createOpenAiLlm(o: OpenAiLlmOptions): Llm {
  // The SDK's own retries are off: exactly one retry is ours to count and to apply to streams too.
  const client = new OpenAI({ baseURL: o.baseURL, apiKey: o.apiKey, maxRetries: 0, timeout: o.timeoutMs ?? 60_000, ...(o.fetch ? { fetch: o.fetch } : {}) });
  const modelFor = (role: Role) => o.roleModels?.[role] ?? o.model ?? "gpt-4o-mini";
  const retryDelay = o.retryDelayMs ?? 250;
  const idleMs = o.timeoutMs ?? 60_000;

  async function attempt<T>(role: Role, messages: ChatMessage[], opts: CallOptions | undefined, once: (signal: AbortSignal | undefined, meta: CallMeta) => Promise<T>): Promise<LlmResult<T>> {
    const started = performance.now();
    const meta: CallMeta = { role, model: modelFor(role), attempts: 0, durationMs: 0, promptChars: JSON.stringify(messages).length, offline: false };
    let lastError: LlmError = { code: "model_unavailable", message: "no attempt made" };
    for (let i = 0; i < 2; i++) {
      if (opts?.signal?.aborted) return { ok: false, error: { code: "cancelled", message: "client went away" }, meta: done() };
      meta.attempts++;
      opts?.onAttempt?.(role);
      try {
        const value = await once(opts?.signal, meta);
        return { ok: true, value, meta: done() };
      } catch (e) {
        if (e instanceof InvalidOutput) return { ok: false, error: { code: "invalid_output", message: redact(e.message, o.apiKey) }, meta: done() };
        if (opts?.signal?.aborted) return { ok: false, error: { code: "cancelled", message: "client went away" }, meta: done() };
        lastError = { code: "model_unavailable", message: redact(describe(e), o.apiKey) };
        if (!retryable(e) || (e instanceof StreamStarted)) break;
        if (i === 0) await sleep(retryDelay, opts?.signal);
      }
    }
    return { ok: false, error: lastError, meta: done() };
    function done() {
      meta.durationMs = performance.now() - started;
      return meta;
    }
  }

  return {
    offline: false,
    modelFor,
    complete(role, messages, opts) {
      return attempt(role, messages, opts, async (signal, meta) => {
        const r = await client.chat.completions.create({ model: modelFor(role), messages }, { signal });
        meta.usage = usageOf(r.usage);
        return r.choices[0]?.message?.content ?? "";
      });
    },
    structured<S extends z.ZodType>(role: Role, messages: ChatMessage[], schema: S, name: string, opts?: CallOptions) {
      return attempt<z.infer<S>>(role, messages, opts, async (signal, meta) => {
        const r = await client.chat.completions.create(
          { model: modelFor(role), messages, response_format: responseFormat(schema, name) as never },
          { signal },
        );
        meta.usage = usageOf(r.usage);
        const content = r.choices[0]?.message?.content ?? "";
        const value = parseStructured(content, schema);
        if (value === null) throw new InvalidOutput(`${role} answered outside its schema: ${content.slice(0, 200)}`);
        return value;
      });
    },
    stream(role, messages, opts: StreamOptions) {
      return attempt(role, messages, opts, async (signal, meta) => {
        // The client's timeout ends when the response headers arrive; a stream that then goes
        // silent would hold the turn forever. No chunk for timeoutMs ends the attempt as a timeout.
        // One timer per attempt that looks at the time of the last chunk (re-arming a timer per
        // token costs more than the rest of reading it).
        const idle = new AbortController();
        let lastData = performance.now();
        const timer = setInterval(() => performance.now() - lastData >= idleMs && idle.abort(), Math.max(10, Math.min(1_000, idleMs / 4)));
        timer.unref();
        const rearm = () => {
          lastData = performance.now();
        };
        const state: ChunkState = { text: "", finished: false, done: false, failure: null };
        try {
          // The SDK makes the request (auth, errors by status, timeout to the headers); the body
          // is read here: the SDK's stream decoder costs about twice what the rest of the relay
          // does per token (measured, bench/stream.ts), and a token relay is all this is.
          const res = await client.chat.completions.create({ model: modelFor(role), messages, stream: true }, { signal: signal ? AbortSignal.any([signal, idle.signal]) : idle.signal }).asResponse();
          await readChunks(res, state, opts.onDelta, rearm);
          if (state.usage) meta.usage = usageOf(state.usage);
        } catch (e) {
          const stalled = idle.signal.aborted && !signal?.aborted;
          // Tokens already reached the client: a retry would duplicate them, so a broken stream after the first delta is final.
          if (state.text && !signal?.aborted) throw new StreamStarted(stalled ? `the stream stalled for ${idleMs} ms` : describe(e));
          if (stalled) throw new OpenAI.APIConnectionTimeoutError({ message: `no data for ${idleMs} ms` });
          throw e;
        } finally {
          clearInterval(timer);
        }
        if (signal?.aborted) throw new Error("cancelled");
        // A stream that just stops, without a finish_reason, was cut: not an answer.
        if (!state.finished) {
          if (state.text) throw new StreamStarted("the stream ended without finish_reason");
          throw new TypeError("the stream ended before any content");
        }
        return state.text;
      });
    },
  };
}

interface ChunkState {
  text: string;
  finished: boolean;
  /** `data: [DONE]` seen: anything after it is ignored. */
  done: boolean;
  failure: unknown;
  /** A provider that sends usage in its last chunk (not asked for: some servers refuse stream_options). */
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

function usageOf(u: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): CallMeta["usage"] {
  return u ? { promptTokens: u.prompt_tokens ?? 0, completionTokens: u.completion_tokens ?? 0 } : undefined;
}

/**
 * Reads a chat-completions event stream: `data:` lines of JSON chunks up to `[DONE]`. As in
 * the SDK, a chunk that is not JSON or that carries `error` fails the stream. Server-sent
 * events are split by SseDataReader: this runs once per token.
 */
async function readChunks(res: Response, state: ChunkState, onDelta: (d: string) => void, onData: () => void): Promise<void> {
  const onEvent = (data: string) => {
    if (state.done || state.failure) return;
    if (data.startsWith("[DONE]")) {
      state.done = true;
      return;
    }
    let chunk: { error?: unknown; usage?: ChunkState["usage"]; choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[] };
    try {
      chunk = JSON.parse(data);
    } catch (e) {
      state.failure = e;
      return;
    }
    if (chunk?.error) {
      state.failure = new OpenAI.APIError(undefined, chunk.error as object, undefined, res.headers);
      return;
    }
    if (chunk?.usage) state.usage = chunk.usage;
    const choice = chunk?.choices?.[0];
    const d = choice?.delta?.content;
    if (d) {
      state.text += d;
      onDelta(d);
    }
    if (choice?.finish_reason) state.finished = true;
  };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events = new SseDataReader(onEvent);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onData();
      events.push(decoder.decode(value, { stream: true }));
      if (state.failure) throw state.failure;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

class InvalidOutput extends Error {}
class StreamStarted extends Error {}
