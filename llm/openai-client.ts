import OpenAI from "openai";
import type { z } from "zod";
import { BodyTooLarge, readBodyCapped, replyBodyBytes, watchIdle, type IdleWatch } from "./bounded-body";
import { createHttpFetch } from "./http-fetch";
import { reuseRequestHeaders } from "./sdk-headers";
import { EventTooLarge, SseDataReader } from "./sse-data";
import { parseStructured, responseFormat } from "./structured";
import {
  DEFAULT_LIMITS,
  promptChars,
  type CallMeta,
  type CallOptions,
  type ChatMessage,
  type Llm,
  type LlmError,
  type LlmResult,
  type ModelLimits,
  type Role,
  type StreamOptions,
} from "./types";

export interface OpenAiLlmOptions {
  baseURL: string;
  apiKey: string;
  model?: string;
  roleModels?: Partial<Record<Role, string | undefined>>;
  timeoutMs?: number;
  /** Pause before the single retry; small, since a patient is waiting. */
  retryDelayMs?: number;
  /** Reply cap and total deadline for every role (DEFAULT_LIMITS where unset), and per role on top. */
  limits?: Partial<ModelLimits>;
  roleLimits?: Partial<Record<Role, Partial<ModelLimits>>>;
  /** The SDK's transport; unset → createHttpFetch() (node:http, keep-alive), `globalThis.fetch` for undici's. */
  fetch?: typeof fetch;
}

/** Errors worth the one retry: the network, a timeout, 408/429 and 5xx. */
function retryable(e: unknown): boolean {
  if (e instanceof OpenAI.APIUserAbortError) return false;
  if (e instanceof OpenAI.APIConnectionError) return true; // includes timeouts
  if (e instanceof OpenAI.APIError)
    return e.status === undefined || e.status === 408 || e.status === 429 || e.status >= 500;
  return e instanceof TypeError; // fetch's network failures
}

/** The longest Retry-After taken as given; a longer one is treated as "not within this turn" by the deadline check. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * How long the provider asked us to wait before the retry (429/503): `retry-after-ms` (OpenAI,
 * Azure), else `retry-after` in seconds or as an HTTP date. Undefined when it did not say.
 */
export function retryAfterMs(e: unknown, now = Date.now()): number | undefined {
  if (!(e instanceof OpenAI.APIError) || !e.headers) return undefined;
  const h = e.headers as Headers | Record<string, string>;
  const get = (k: string) =>
    typeof (h as Headers).get === "function" ? (h as Headers).get(k) : (h as Record<string, string>)[k];
  const ms = get("retry-after-ms")?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.min(Number(ms), MAX_RETRY_AFTER_MS);
  const ra = get("retry-after")?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Math.min(Number(ra) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
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

/** A pause that an abort ends early; its listener goes with it (a signal outlives many pauses). */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });

/** One `openai` client for every role; the role picks the model name (LLM_MODEL_<ROLE>). */
export function createOpenAiLlm(o: OpenAiLlmOptions): Llm {
  // The SDK's own retries are off: exactly one retry is ours to count and to apply to streams too.
  const client = new OpenAI({
    baseURL: o.baseURL,
    apiKey: o.apiKey,
    maxRetries: 0,
    timeout: o.timeoutMs ?? 60_000,
    // node:http rather than undici's fetch: about 0.7 ms less CPU per router+branch call pair (llm/http-fetch.ts).
    fetch: o.fetch ?? createHttpFetch(),
  });
  reuseRequestHeaders(client);
  const modelFor = (role: Role) => o.roleModels?.[role] ?? o.model ?? "gpt-4o-mini";
  const limitsFor = (role: Role): ModelLimits => {
    const pick = <K extends keyof ModelLimits>(k: K) => o.roleLimits?.[role]?.[k] ?? o.limits?.[k] ?? DEFAULT_LIMITS[k];
    return { maxReplyChars: pick("maxReplyChars"), totalTimeoutMs: pick("totalTimeoutMs") };
  };
  const retryDelay = o.retryDelayMs ?? 250;
  const idleMs = o.timeoutMs ?? 60_000;

  /**
   * One call: at most two attempts under one total deadline. Each attempt gets its own
   * AbortController that the caller's signal and the deadline abort through listeners removed
   * when the call ends. Not `AbortSignal.any([...])`: on Node 20 every such signal stays
   * reachable from its sources (nodejs/node#55351, #54614), about 2 KB per streamed turn.
   */
  async function attempt<T>(
    role: Role,
    messages: ChatMessage[],
    opts: CallOptions | undefined,
    once: (ac: AbortController, limits: ModelLimits, meta: CallMeta) => Promise<T>,
  ): Promise<LlmResult<T>> {
    const started = performance.now();
    const limits = limitsFor(role);
    const meta: CallMeta = {
      role,
      model: modelFor(role),
      attempts: 0,
      durationMs: 0,
      promptChars: promptChars(messages),
      offline: false,
    };
    let lastError: LlmError = { code: "model_unavailable", message: "no attempt made" };
    let current: AbortController | null = null;
    let deadlineHit = false;
    const deadline = setTimeout(() => {
      deadlineHit = true;
      current?.abort();
    }, limits.totalTimeoutMs);
    deadline.unref();
    const onCallerAbort = () => current?.abort();
    const caller = opts?.signal;
    caller?.addEventListener("abort", onCallerAbort);
    const cancelled = (): LlmResult<T> => ({
      ok: false,
      error: { code: "cancelled", message: "client went away" },
      meta: done(),
    });
    const overDeadline: LlmError = {
      code: "model_unavailable",
      message: `no complete reply within ${limits.totalTimeoutMs} ms`,
      limit: "total_timeout",
    };
    try {
      for (let i = 0; i < 2; i++) {
        if (caller?.aborted) return cancelled();
        if (deadlineHit) {
          lastError = overDeadline;
          break;
        }
        meta.attempts++;
        opts?.onAttempt?.(role);
        current = new AbortController();
        try {
          const value = await once(current, limits, meta);
          return { ok: true, value, meta: done() };
        } catch (e) {
          if (e instanceof InvalidOutput)
            return { ok: false, error: { code: "invalid_output", message: redact(e.message, o.apiKey) }, meta: done() };
          if (caller?.aborted) return cancelled();
          if (deadlineHit) {
            lastError = overDeadline;
            break;
          }
          if (e instanceof ReplyTooLong) {
            lastError = { code: "model_unavailable", message: e.message, limit: "reply_too_long" };
            break;
          }
          lastError = { code: "model_unavailable", message: redact(describe(e), o.apiKey) };
          if (!retryable(e) || e instanceof StreamStarted) break;
          if (i === 0) {
            // The provider's Retry-After when it sent one (a rate limit), else our short pause.
            // A wait that would end past the role's deadline is not slept: the call fails now.
            const asked = retryAfterMs(e);
            const wait = asked ?? retryDelay;
            const left = limits.totalTimeoutMs - (performance.now() - started);
            if (asked !== undefined && wait >= left) {
              lastError = {
                code: "model_unavailable",
                message: `${lastError.message} (the provider asked to retry after ${Math.round(wait)} ms; ${Math.max(0, Math.round(left))} ms left of ${limits.totalTimeoutMs} ms)`,
              };
              break;
            }
            current = new AbortController();
            await sleep(wait, current.signal);
          }
        }
      }
      return { ok: false, error: lastError, meta: done() };
    } finally {
      clearTimeout(deadline);
      caller?.removeEventListener("abort", onCallerAbort);
      current = null;
    }
    function done() {
      meta.durationMs = performance.now() - started;
      return meta;
    }
  }

  /** A whole (non-streamed) reply over the cap is refused like a streamed one. */
  const capped = (content: string, limits: ModelLimits) => {
    if (content.length > limits.maxReplyChars) throw new ReplyTooLong(limits.maxReplyChars);
    return content;
  };

  /**
   * A non-streamed reply, read with the same bounds as a stream: the body's bytes capped while
   * they are read (the SDK would buffer a body that never ends), and no data for `idleMs` after
   * the headers ends the attempt as a timeout.
   */
  async function wholeReply(
    ac: AbortController,
    limits: ModelLimits,
    meta: CallMeta,
    body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
  ): Promise<string> {
    // Up to the headers the SDK's own timeout (the same idleMs) applies; from them on, this one.
    let idle: IdleWatch | null = null;
    try {
      const res = await client.chat.completions.create(body, { signal: ac.signal }).asResponse();
      idle = watchIdle(ac, idleMs);
      const text = await readBodyCapped(res, replyBodyBytes(limits.maxReplyChars), idle.rearm);
      const r = JSON.parse(text) as OpenAI.Chat.ChatCompletion;
      meta.usage = usageOf(r.usage);
      return capped(r.choices?.[0]?.message?.content ?? "", limits);
    } catch (e) {
      if (e instanceof BodyTooLarge) throw new ReplyTooLong(limits.maxReplyChars);
      if (idle?.stalled) throw new OpenAI.APIConnectionTimeoutError({ message: `no data for ${idleMs} ms` });
      throw e;
    } finally {
      idle?.stop();
    }
  }

  return {
    offline: false,
    modelFor,
    complete(role, messages, opts) {
      return attempt(role, messages, opts, (ac, limits, meta) =>
        wholeReply(ac, limits, meta, { model: modelFor(role), messages }),
      );
    },
    structured<S extends z.ZodType>(role: Role, messages: ChatMessage[], schema: S, name: string, opts?: CallOptions) {
      return attempt<z.infer<S>>(role, messages, opts, async (ac, limits, meta) => {
        const content = await wholeReply(ac, limits, meta, {
          model: modelFor(role),
          messages,
          response_format: responseFormat(schema, name) as never,
        });
        const value = parseStructured(content, schema);
        if (value === null) throw new InvalidOutput(`${role} answered outside its schema: ${content.slice(0, 200)}`);
        return value;
      });
    },
    stream(role, messages, opts: StreamOptions) {
      return attempt(role, messages, opts, async (ac, limits, meta) => {
        // The client's timeout ends when the response headers arrive; a stream that then goes
        // silent would hold the turn forever. No chunk for timeoutMs ends the attempt as a timeout.
        const idle = watchIdle(ac, idleMs);
        const state: ChunkState = {
          text: "",
          finished: false,
          done: false,
          failure: null,
          maxChars: limits.maxReplyChars,
        };
        try {
          // The SDK makes the request (auth, errors by status, timeout to the headers); the body
          // is read here: the SDK's stream decoder costs about twice what the rest of the relay
          // does per token (measured, bench/stream.ts), and a token relay is all this is.
          const res = await client.chat.completions
            .create({ model: modelFor(role), messages, stream: true }, { signal: ac.signal })
            .asResponse();
          await readChunks(res, state, opts.onDelta, idle.rearm);
          if (state.usage) meta.usage = usageOf(state.usage);
        } catch (e) {
          // Ours (a limit, the caller, the deadline): the call decides; nothing here is retried.
          if (e instanceof ReplyTooLong || (ac.signal.aborted && !idle.stalled)) throw e;
          // Tokens already reached the client: a retry would duplicate them, so a broken stream after the first delta is final.
          if (state.text) throw new StreamStarted(idle.stalled ? `the stream stalled for ${idleMs} ms` : describe(e));
          if (idle.stalled) throw new OpenAI.APIConnectionTimeoutError({ message: `no data for ${idleMs} ms` });
          throw e;
        } finally {
          idle.stop();
        }
        if (ac.signal.aborted) throw new Error("aborted");
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
  /** The reply cap: one more character fails the stream (ReplyTooLong). */
  maxChars: number;
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
async function readChunks(
  res: Response,
  state: ChunkState,
  onDelta: (d: string) => void,
  onData: () => void,
): Promise<void> {
  const onEvent = (data: string) => {
    if (state.done || state.failure) return;
    if (data.startsWith("[DONE]")) {
      state.done = true;
      return;
    }
    let chunk: {
      error?: unknown;
      usage?: ChunkState["usage"];
      choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
    };
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
      if (state.text.length + d.length > state.maxChars) {
        state.failure = new ReplyTooLong(state.maxChars);
        return;
      }
      state.text += d;
      onDelta(d);
    }
    if (choice?.finish_reason) state.finished = true;
  };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  // An event is one JSON chunk; escaping can make its data up to six times its text, plus the envelope.
  const events = new SseDataReader(onEvent, state.maxChars * 6 + 4096);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onData();
      try {
        events.push(decoder.decode(value, { stream: true }));
      } catch (e) {
        if (e instanceof EventTooLarge) throw new ReplyTooLong(state.maxChars);
        throw e;
      }
      if (state.failure) throw state.failure;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

class InvalidOutput extends Error {}
class StreamStarted extends Error {}
class ReplyTooLong extends Error {
  constructor(limit: number) {
    super(`the reply exceeded ${limit} characters`);
  }
}
