// The answer prompt as the scripted model server receives it, and replies written after reading
// it: what a model sees is the claims menu (ids, kinds, blocks, the engine's sentences), so a
// scripted reply chooses from that menu the way a real model answers that prompt.
import type { ScriptStep, RecordedCall } from "../../utils/scripted-llm";

export interface PromptClaim {
  id: string;
  kind: string;
  blocks: string[];
  text: string;
  facts: string[];
  mandatory?: string;
}
export interface AnswerPrompt {
  original_question: string;
  coverage: { outcome: string };
  menu: PromptClaim[];
  engine_choice: Record<"short" | "checked" | "found" | "not_established" | "next_step", string[]>;
}

/** The answer step's input, read from the recorded call (the system prompt, then the JSON input). */
export const promptOf = (call: Pick<RecordedCall, "messages">): AnswerPrompt =>
  JSON.parse(call.messages.at(-1)!.content) as AnswerPrompt;

/** A reply chosen after reading the prompt; `choose` returns the JSON object (or raw text) the model would send. */
export const replyTo = (choose: (p: AnswerPrompt) => unknown): ScriptStep => ({
  reply: (call) => {
    const out = choose(promptOf(call));
    return typeof out === "string" ? out : JSON.stringify(out);
  },
});

/** Ids of the menu's claims of a kind (optionally whose sentence matches). */
export const idsOf = (p: AnswerPrompt, kind: string, text?: RegExp) =>
  p.menu.filter((c) => c.kind === kind && (!text || text.test(c.text))).map((c) => c.id);
export const kindsIn = (p: AnswerPrompt, ...kinds: string[]) =>
  p.menu.filter((c) => kinds.includes(c.kind)).map((c) => c.id);
