import { expect } from "vitest";

/** Opens a conversation of `system` on the server at `base`; it must be created (201). Returns its id. */
export async function openConversation(
  base: string,
  system: "evidence" | "workbench",
  headers: Record<string, string> = {},
): Promise<string> {
  const r = await fetch(`${base}/v1/${system}/conversations`, { method: "POST", headers });
  expect(r.status).toBe(201);
  return ((await r.json()) as { conversationId: string }).conversationId;
}
