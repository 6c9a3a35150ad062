import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";
import { postSse, type SseResponse } from "../utils/sse";
import { workspace } from "../systems/workbench/fixtures";
import { createStorage, modelEnv, startServerProcess, type ServerProcess, type Storage } from "./processes";

/**
 * Two server processes (`node --import tsx http/main.ts`) on one PostgreSQL database, 50
 * concurrent requests on one conversation spread over both: turns serialize on the snapshot
 * version — each commits or gets `conflict`, nothing is lost or interleaved — and of 50 answers
 * to one clarification exactly one applies.
 */
const N = 50;
let llm: ScriptedLlm;
let storage: Storage;
let a: ServerProcess;
let b: ServerProcess;
let sql: postgres.Sql;

describe.runIf(onServer)("two server processes on one PostgreSQL database", () => {
  beforeAll(async () => {
    llm = await startScriptedLlm();
    storage = await createStorage();
    [a, b] = await Promise.all([startServerProcess(storage, modelEnv(llm)), startServerProcess(storage, modelEnv(llm))]);
    sql = postgres(storage.url!, { max: 2, onnotice: () => {} });
  }, 180_000);
  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await sql?.end({ timeout: 2 });
    await llm?.close();
    await storage?.drop();
  });

  const ev = (r: SseResponse, name: string) => r.events.filter((e) => e.event === name).map((e) => e.data as Record<string, any>);

  it(`${N} concurrent messages to one clinic thread: each commits or gets conflict; the message sequence is intact`, async () => {
    const thread = ((await (await fetch(`${a.url}/v1/clinic/threads`, { method: "POST" })).json()) as { threadId: string }).threadId;
    llm.script("router", "general_info");
    llm.script("branch", "Здравствуйте! Чем помочь?");
    const first = await postSse(`${a.url}/v1/clinic/threads/${thread}/messages`, { text: "Добрый день" });
    expect(ev(first, "final")).toHaveLength(1);

    for (let i = 0; i < N; i++) {
      llm.script("router", "general_info");
      llm.script("branch", "Ответ на вопрос.");
    }
    const texts = Array.from({ length: N }, (_, i) => `Вопрос номер ${i}`);
    const results = await Promise.all(texts.map((text, i) => postSse(`${(i % 2 ? b : a).url}/v1/clinic/threads/${thread}/messages`, { text })));

    const committed: { runId: string; text: string }[] = [];
    let conflicts = 0;
    results.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect(r.events.at(-1)?.event).toBe("done");
      const runId = ev(r, "run_started")[0]!.runId as string;
      const final = ev(r, "final")[0];
      const error = ev(r, "error")[0];
      if (final) {
        expect(final.events ?? []).not.toContain("model_unavailable");
        committed.push({ runId, text: texts[i]! });
      } else {
        expect(error?.code).toBe("conflict");
        conflicts++;
      }
    });
    expect(committed.length).toBeGreaterThanOrEqual(1);
    expect(committed.length + conflicts).toBe(N);

    // The stored thread: the first turn plus exactly the committed ones, each a user/assistant
    // pair with consecutive sequence numbers and the right text, no gaps, nothing from a loser.
    const rows = await sql<{ seq: number; role: string; text: string; run_id: string }[]>`
      select seq, role, text, run_id from messages where conversation_id = ${thread} order by seq`;
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    expect(rows).toHaveLength(2 + 2 * committed.length);
    const byRun = new Map(committed.map((c) => [c.runId, c.text]));
    for (let i = 2; i < rows.length; i += 2) {
      const [user, assistant] = [rows[i]!, rows[i + 1]!];
      expect([user.role, assistant.role]).toEqual(["user", "assistant"]);
      expect(user.run_id).toBe(assistant.run_id);
      expect(byRun.get(user.run_id)).toBe(user.text);
      byRun.delete(user.run_id);
    }
    expect(byRun.size).toBe(0);
    const [snap] = await sql<{ row_version: number }[]>`select row_version from machine_snapshots where key = ${thread}`;
    expect(snap!.row_version).toBe(1 + committed.length);
    const runs = await sql<{ status: string; n: number }[]>`select status, count(*)::int as n from runs where conversation_id = ${thread} group by status order by status`;
    expect(runs).toEqual([
      { status: "completed", n: 1 + committed.length },
      ...(conflicts ? [{ status: "failed", n: conflicts }] : []),
    ]);
    console.log(`clinic: ${committed.length} of ${N} concurrent turns committed, ${conflicts} got conflict`);
  }, 180_000);

  it(`${N} concurrent answers to one Workbench clarification: exactly one applies, the rest get 409 conflict`, async () => {
    llm.reset();
    const conv = ((await (await fetch(`${a.url}/v1/workbench/conversations`, { method: "POST" })).json()) as { conversationId: string }).conversationId;
    llm.script("reranker", '{"choice": "clarify"}');
    const r = await postSse(`${a.url}/v1/workbench/conversations/${conv}/messages`, { text: "Покажи композицию «Расчёт скидки»", workspace });
    const q = ev(r, "clarification_required")[0]!;
    expect(q?.candidates?.length).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < N; i++) llm.script("answer", "Ответ.");
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        postSse(`${(i % 2 ? b : a).url}/v1/workbench/conversations/${conv}/messages`, {
          text: `вариант ${i}`, workspace, interactionId: q.interactionId, replyToClarificationId: q.id, selectedCandidateId: q.candidates[i % 2].candidateId,
        }),
      ),
    );
    const applied = answers.filter((x) => x.status === 200);
    const conflicts = answers.filter((x) => x.status === 409);
    expect(applied).toHaveLength(1);
    expect(conflicts).toHaveLength(N - 1);
    for (const c of conflicts) expect((c.json as { error: { code: string } }).error.code).toBe("conflict");
    expect(ev(applied[0]!, "final")[0]).toMatchObject({ status: "completed" });
    expect(llm.count("answer")).toBe(1);
    const it1 = (await (await fetch(`${b.url}/v1/workbench/interactions/${q.interactionId}`)).json()) as { status: string; clarifications: { status: string }[] };
    expect(it1.status).toBe("completed");
    expect(it1.clarifications.map((c) => c.status)).toEqual(["answered"]);
    const [users] = await sql<{ n: number }[]>`select count(*)::int as n from messages where conversation_id = ${conv} and role = 'user'`;
    expect(users!.n).toBe(2);
  }, 180_000);
});
