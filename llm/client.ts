import { createOfflineLlm } from "./offline";
import { createOpenAiLlm, type OpenAiLlmOptions } from "./openai-client";
import type { Llm } from "./types";

export * from "./types";
export { OFFLINE_LABEL, registerOfflineResponder } from "./offline";

/** The OpenAI client's options, each optional (unset → offline or the defaults), with the transport by name. */
export interface LlmConfig extends Partial<Omit<OpenAiLlmOptions, "fetch">> {
  /** LLM_FETCH: `http` (default, llm/http-fetch.ts on node:http) or `platform` (Node's undici fetch). */
  transport?: "http" | "platform";
}

/** The configured endpoint, or the offline provider when there is none. */
export function createLlm(c: LlmConfig, log: (line: string) => void = () => {}): Llm {
  if (!c.baseURL && !c.apiKey) return createOfflineLlm(log);
  return createOpenAiLlm({
    // A local server (Ollama, llama.cpp) needs no key; the SDK insists on one.
    baseURL: c.baseURL ?? "https://api.openai.com/v1",
    apiKey: c.apiKey ?? "not-needed",
    model: c.model,
    roleModels: c.roleModels,
    timeoutMs: c.timeoutMs,
    retryDelayMs: c.retryDelayMs,
    limits: c.limits,
    roleLimits: c.roleLimits,
    // LLM_FETCH=platform: back to undici's fetch should the node:http transport misbehave with a provider.
    ...(c.transport === "platform" ? { fetch: globalThis.fetch } : {}),
  });
}
