import type { z } from "zod";

/**
 * A model role ("router", "answer", …): each dialogue system names the roles it calls
 * (`DialogueSystem.modelRoles`), and LLM_MODEL_<ROLE> may pick a model per role.
 */
export type Role = string;

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface CallMeta {
  role: Role;
  model: string;
  attempts: number;
  durationMs: number;
  /** Characters of the messages' contents (promptChars below). */
  promptChars: number;
  offline: boolean;
  /** Tokens as the provider reported them (absent when it did not, e.g. a stream without usage). */
  usage?: { promptTokens: number; completionTokens: number };
}

export interface LlmError {
  /** model_unavailable: the endpoint failed (after the one retry); invalid_output: it answered, but not in the asked shape. */
  code: "model_unavailable" | "invalid_output" | "cancelled";
  message: string;
  /** A model_unavailable that was a limit of ours, not the endpoint's failure (never retried). */
  limit?: "reply_too_long" | "total_timeout";
}

/** Bounds on one model call, per role (LLM_MAX_REPLY_CHARS[_ROLE], LLM_TOTAL_TIMEOUT_MS[_ROLE]). */
export interface ModelLimits {
  /** Longest reply accepted, in characters: past it the call fails and the turn with it (nothing stored). */
  maxReplyChars: number;
  /** Wall-clock bound on one call, its retry included; the idle timeout alone lets an endless stream run forever. */
  totalTimeoutMs: number;
}

export const DEFAULT_LIMITS: ModelLimits = { maxReplyChars: 64 * 1024, totalTimeoutMs: 180_000 };

export type LlmResult<T> = ({ ok: true; value: T } | { ok: false; error: LlmError }) & { meta: CallMeta };

export interface CallOptions {
  signal?: AbortSignal;
  /** Called once per attempt, e.g. to count model calls per role. */
  onAttempt?: (role: Role) => void;
}

export interface StreamOptions extends CallOptions {
  onDelta: (delta: string) => void;
}

export interface Llm {
  /** True when no endpoint is configured and the deterministic offline provider answers. */
  readonly offline: boolean;
  modelFor(role: Role): string;
  complete(role: Role, messages: ChatMessage[], opts?: CallOptions): Promise<LlmResult<string>>;
  stream(role: Role, messages: ChatMessage[], opts: StreamOptions): Promise<LlmResult<string>>;
  structured<S extends z.ZodType>(
    role: Role,
    messages: ChatMessage[],
    schema: S,
    name: string,
    opts?: CallOptions,
  ): Promise<LlmResult<z.infer<S>>>;
}

/**
 * The prompt's size in characters: its messages' contents. Counted, not serialized — the JSON
 * text of a branch prompt is 5–10 KB of two-byte (Cyrillic) string per call, built only to be measured.
 */
export function promptChars(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += m.content.length;
  return n;
}
