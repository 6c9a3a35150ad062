import type { IncomingMessage } from "node:http";

/**
 * The chat-completions wire format as the fake OpenAI-compatible servers write it: the tests'
 * scripted model (scripted-llm.ts) and the eval's model (eval/lib/model-server.ts).
 */
const now = () => Math.floor(Date.now() / 1000);

/** One `data:` object of a streamed reply. */
export const completionChunk = (model: string, delta: object, finish: string | null = null) => ({
  id: "chatcmpl-scripted",
  object: "chat.completion.chunk",
  created: now(),
  model,
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** A whole (not streamed) reply. */
export const completion = (
  model: string,
  content: string,
  usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
) => ({
  id: "chatcmpl-scripted",
  object: "chat.completion",
  created: now(),
  model,
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage,
});

export async function readBody(req: IncomingMessage): Promise<string> {
  let body = "";
  for await (const c of req) body += c;
  return body;
}
