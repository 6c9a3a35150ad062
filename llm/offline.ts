import type { z } from "zod";
import { parseStructured } from "./structured";
import { promptChars, type CallMeta, type ChatMessage, type Llm, type LlmResult, type Role } from "./types";

/** Every offline answer carries this label, so nobody mistakes it for a model's words. */
export const OFFLINE_LABEL = "[офлайн-режим: языковая модель не подключена]";

/** Answers a prompt it recognises, or returns null to let the next responder (or the default) answer. */
export type OfflineResponder = (messages: ChatMessage[]) => string | null;

const responders = new Map<Role, OfflineResponder[]>();

/**
 * Features (clinic, workbench) register deterministic stand-ins for their roles. Several features
 * share a role (ANSWER), so responders chain: each declines prompts that are not its own.
 */
export function registerOfflineResponder(role: Role, fn: OfflineResponder): void {
  const list = responders.get(role) ?? [];
  if (!list.includes(fn)) list.push(fn);
  responders.set(role, list);
}

const lastUser = (messages: ChatMessage[]) => [...messages].reverse().find((m) => m.role === "user")?.content ?? "";

function fallback(role: Role, messages: ChatMessage[]): string {
  switch (role) {
    case "planner":
    case "reranker":
    case "classifier":
      // No opinion: the callers fall back to their deterministic path.
      return "{}";
    case "router":
      return "general_info";
    default:
      return `${OFFLINE_LABEL} Получено сообщение: «${lastUser(messages).slice(0, 200)}». Подключите модель (OPENAI_BASE_URL, OPENAI_API_KEY), чтобы получить содержательный ответ.`;
  }
}

/** Text roles are labelled; structured roles stay machine-readable. */
function answer(role: Role, messages: ChatMessage[]): string {
  let text: string | null = null;
  for (const r of responders.get(role) ?? []) if ((text = r(messages)) !== null) break;
  text ??= fallback(role, messages);
  if (role === "answer" || role === "branch") return text.includes(OFFLINE_LABEL) ? text : `${OFFLINE_LABEL} ${text}`;
  return text;
}

/** A deterministic provider for `npm start` without a key: same interface, no network. */
export function createOfflineLlm(log: (line: string) => void = () => {}): Llm {
  let warned = false;
  const meta = (role: Role, messages: ChatMessage[]): CallMeta => ({
    role,
    model: `offline-${role}`,
    attempts: 1,
    durationMs: 0,
    promptChars: promptChars(messages),
    offline: true,
  });
  const note = (role: Role) => {
    if (!warned)
      log("llm: no OPENAI_BASE_URL/OPENAI_API_KEY — the offline provider answers every role deterministically");
    warned = true;
    log(`llm: offline answer for role ${role}`);
  };
  return {
    offline: true,
    modelFor: (role) => `offline-${role}`,
    async complete(role, messages, opts) {
      opts?.onAttempt?.(role);
      note(role);
      return { ok: true, value: answer(role, messages), meta: meta(role, messages) };
    },
    async stream(role, messages, opts) {
      opts.onAttempt?.(role);
      note(role);
      const text = answer(role, messages);
      // Stream word by word, like a model would, so the client's path is the same.
      for (const piece of text.match(/\S+\s*|\s+/g) ?? []) {
        if (opts.signal?.aborted)
          return { ok: false, error: { code: "cancelled", message: "client went away" }, meta: meta(role, messages) };
        opts.onDelta(piece);
      }
      return { ok: true, value: text, meta: meta(role, messages) };
    },
    async structured<S extends z.ZodType>(
      role: Role,
      messages: ChatMessage[],
      schema: S,
      _name: string,
      opts?: { onAttempt?: (r: Role) => void },
    ): Promise<LlmResult<z.infer<S>>> {
      opts?.onAttempt?.(role);
      note(role);
      const value = parseStructured(answer(role, messages), schema);
      return value === null
        ? {
            ok: false,
            error: { code: "invalid_output", message: "offline provider has no structured opinion" },
            meta: meta(role, messages),
          }
        : { ok: true, value, meta: meta(role, messages) };
    },
  };
}
