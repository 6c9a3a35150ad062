import { describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { workspace } from "../systems/workbench/fixtures";
import { newConversation, one, send } from "../systems/workbench/http-workbench-helpers";

/**
 * Found by the fuzz run (DELETE /v1/inbox/conversations/:id → 500 on PostgreSQL): erasing a
 * Workbench conversation whose clarifications point at its messages. The cascade from the
 * conversation deletes the messages before the clarifications that refer to them, and the
 * (not deferred) foreign key check failed in between. Erasure must work in every state.
 */
const server = useTestServer({ llm: true, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

const erase = (id: string) => fetch(`${server.url}/v1/inbox/conversations/${id}`, { method: "DELETE" });
const left = async (id: string) =>
  (
    await server.db.sql<{ n: number }[]>`
      select ((select count(*) from messages where conversation_id = ${id})
            + (select count(*) from interactions where conversation_id = ${id})
            + (select count(*) from conversations where id = ${id}))::int as n`
  )[0]!.n;

describe("erasure of a Workbench conversation", () => {
  it("with an open clarification (its question is a message of the conversation): 204, nothing left", async () => {
    llm.reset();
    llm.script("reranker", '{"choice": "clarify"}');
    const conv = await newConversation(server.url);
    const r = await send(server.url, conv, { text: "Покажи композицию «Расчёт скидки»", workspace });
    expect(one(r, "clarification_required")).toBeTruthy();
    const res = await erase(conv);
    expect(res.status).toBe(204);
    expect(await left(conv)).toBe(0);
  });

  it("with an answered clarification (question and answer messages referenced): 204, nothing left", async () => {
    llm.reset();
    llm.script("reranker", '{"choice": "clarify"}');
    const conv = await newConversation(server.url);
    const r = await send(server.url, conv, { text: "Покажи композицию «Расчёт скидки»", workspace });
    const q = one(r, "clarification_required")!;
    llm.script("answer", "Архивная версия [[composition-discount-v1]].");
    const pick = q.candidates.find((c: { identity: string }) => c.identity === "composition-discount-v1");
    const r2 = await send(server.url, conv, {
      text: "архивную",
      workspace,
      interactionId: q.interactionId,
      replyToClarificationId: q.id,
      selectedCandidateId: pick.candidateId,
    });
    expect(one(r2, "final")).toBeTruthy();
    expect((await erase(conv)).status).toBe(204);
    expect(await left(conv)).toBe(0);
  });
});
