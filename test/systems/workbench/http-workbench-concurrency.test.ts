import { describe, expect, it } from "vitest";
import { onServer } from "../../utils/db";
import { useTestServer } from "../../utils/server";
import { workspace } from "./fixtures";
import {
  askWhichDiscount,
  expectReplayMatches,
  interaction,
  newConversation,
  one,
  replyTo,
  type Json,
} from "./http-workbench-helpers";

const server = useTestServer({ llm: true, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

describe(`workbench: concurrent answers to one clarification (${onServer ? "PostgreSQL server" : "PGlite"})`, () => {
  it("20 concurrent answers: exactly one is applied, the other 19 get 409 conflict", async () => {
    const conv = await newConversation(server.url);
    const { q } = await askWhichDiscount(llm, server.url, conv, { workspace });
    for (let i = 0; i < 20; i++) llm.script("answer", "Ответ.");
    const answers = await Promise.all(
      Array.from({ length: Number(process.env.WB_N ?? 20) }, (_, i) =>
        replyTo(server.url, conv, q, `вариант ${i}`, workspace, {
          interactionId: q.interactionId,
          selectedCandidateId: q.candidates[i % 2].candidateId,
        }),
      ),
    );
    const applied = answers.filter((a) => a.status === 200);
    const conflicts = answers.filter((a) => a.status === 409);
    expect(applied).toHaveLength(1);
    expect(conflicts).toHaveLength(Number(process.env.WB_N ?? 20) - 1);
    for (const c of conflicts) expect((c.json as Json).error.code).toBe("conflict");
    expect(one(applied[0]!, "final")).toMatchObject({ status: "completed" });
    expect(llm.count("answer")).toBe(1);

    const it1 = await interaction(server.url, q.interactionId);
    expect(it1).toMatchObject({ status: "completed", planVersion: 2 });
    expect(it1.clarifications).toHaveLength(1);
    expect(it1.clarifications[0].status).toBe("answered");
    // exactly one reply message was stored and linked
    const rows = await server.db.sql<
      { n: number }[]
    >`select count(*)::int as n from messages where conversation_id = ${conv} and role = 'user'`;
    expect(rows[0]!.n).toBe(2);
    await expectReplayMatches(server.db.sql, `interaction:${q.interactionId}`);
  }, 60_000);
});
