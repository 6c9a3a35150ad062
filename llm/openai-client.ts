import OpenAI from "openai";
import type { z } from "zod";
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

  async function attempt<T>(role: Role, messages: ChatMessage[], opts: CallOptions | undefined, once: (signal: AbortSignal | undefined) => Promise<T>): Promise<LlmResult<T>> {
    const started = performance.now();
    const meta: CallMeta = { role, model: modelFor(role), attempts: 0, durationMs: 0, promptChars: JSON.stringify(messages).length, offline: false };
    let lastError: LlmError = { code: "model_unavailable", message: "no attempt made" };
    for (let i = 0; i < 2; i++) {
      if (opts?.signal?.aborted) return { ok: false, error: { code: "cancelled", message: "client went away" }, meta: done() };
      meta.attempts++;
      opts?.onAttempt?.(role);
      try {
        const value = await once(opts?.signal);
        return { ok: true, value, meta: done() };
      } catch (e) {
        if (e instanceof InvalidOutput) return { ok: false, error: { code: "invalid_output", message: e.message }, meta: done() };
        if (opts?.signal?.aborted) return { ok: false, error: { code: "cancelled", message: "client went away" }, meta: done() };
        lastError = { code: "model_unavailable", message: describe(e) };
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
      return attempt(role, messages, opts, async (signal) => {
        const r = await client.chat.completions.create({ model: modelFor(role), messages }, { signal });
        return r.choices[0]?.message?.content ?? "";
      });
    },
    structured<S extends z.ZodType>(role: Role, messages: ChatMessage[], schema: S, name: string, opts?: CallOptions) {
      return attempt<z.infer<S>>(role, messages, opts, async (signal) => {
        const r = await client.chat.completions.create(
          { model: modelFor(role), messages, response_format: responseFormat(schema, name) as never },
          { signal },
        );
        const content = r.choices[0]?.message?.content ?? "";
        const value = parseStructured(content, schema);
        if (value === null) throw new InvalidOutput(`${role} answered outside its schema: ${content.slice(0, 200)}`);
        return value;
      });
    },
    stream(role, messages, opts: StreamOptions) {
      return attempt(role, messages, opts, async (signal) => {
        const s = await client.chat.completions.create({ model: modelFor(role), messages, stream: true }, { signal });
        let text = "";
        let finished = false;
        try {
          for await (const chunk of s) {
            const choice = chunk.choices[0];
            const d = choice?.delta?.content;
            if (d) {
              text += d;
              opts.onDelta(d);
            }
            if (choice?.finish_reason) finished = true;
          }
        } catch (e) {
          // Tokens already reached the client: a retry would duplicate them, so a broken stream after the first delta is final.
          if (text && !signal?.aborted) throw new StreamStarted(describe(e));
          throw e;
        }
        if (signal?.aborted) throw new Error("cancelled");
        // A stream that just stops, without a finish_reason, was cut: not an answer.
        if (!finished) {
          if (text) throw new StreamStarted("the stream ended without finish_reason");
          throw new TypeError("the stream ended before any content");
        }
        return text;
      });
    },
  };
}

class InvalidOutput extends Error {}
class StreamStarted extends Error {}
