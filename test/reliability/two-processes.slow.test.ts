import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { postSse, type SseResponse } from "../utils/sse";
import { workspace } from "../systems/workbench/fixtures";
import { useServerProcesses, type ServerProcess } from "./processes";
import { newConversation } from "../systems/workbench/http-workbench-helpers";
import { clinicApi } from "../utils/clinic-api";

/**
 * Two server processes (`node --import tsx main.ts`) on one PostgreSQL database, 50
 * concurrent requests on one conversation spread over both: policy `reject` (doc/clients.md) —
 * one turn runs, the others get HTTP 409 `conversation_busy` before any model call — and of 50
 * answers to one clarification exactly one applies.
 */
const N = 50;
let a: ServerProcess;
let b: ServerProcess;
let sql: postgres.Sql;

describe.runIf(onServer)("two server processes on one PostgreSQL database", () => {
  const fx = useServerProcesses({}, 2);
  const llm = fx.llm;
  beforeAll(async () => {
    [a, b] = fx.servers as [ServerProcess, ServerProcess];
    sql = postgres(fx.storage.url!, { max: 2, onnotice: () => {} });
  }, 180_000);
  afterAll(async () => {
    await sql?.end({ timeout: 2 });
  });

  const ev = (r: SseResponse, name: string) =>
    r.events.filter((e) => e.event === name).map((e) => e.data as Record<string, any>);

  it(`${N} concurrent messages to one clinic thread over two processes: policy reject — one turn, one model call, ${N - 1} HTTP 409 before any stream`, async () => {
    const thread = await clinicApi(a.url).newThread();
    llm.script("router", "general_info");
    llm.script("branch", "Здравствуйте! Чем помочь?");
    const first = await postSse(`${a.url}/v1/clinic/threads/${thread}/messages`, { text: "Добрый день" });
    expect(ev(first, "final")).toHaveLength(1);

    llm.reset();
    // The winner's answer streams slowly, so every other message arrives while its turn runs.
    llm.script("router", "general_info");
    llm.script("branch", { content: "Ответ на вопрос, который пишется медленно. ".repeat(6), chunkDelayMs: 40 });
    const texts = Array.from({ length: N }, (_, i) => `Вопрос номер ${i}`);
    const results = await Promise.all(
      texts.map((text, i) => postSse(`${(i % 2 ? b : a).url}/v1/clinic/threads/${thread}/messages`, { text })),
    );

    const streamed = results.filter((r) => r.status === 200);
    const rejected = results.filter((r) => r.status === 409);
    expect(streamed).toHaveLength(1);
    expect(rejected).toHaveLength(N - 1);
    const winner = streamed[0]!;
    expect(winner.events.at(-1)?.event).toBe("done");
    expect(ev(winner, "final")).toHaveLength(1);
    const runId = winner.headers.get("x-run-id");
    for (const r of rejected) {
      expect(r.headers.get("content-type")).toContain("application/json");
      expect(r.json).toMatchObject({ error: { code: "conflict", details: { reason: "conversation_busy", runId } } });
    }
    // Decided before the model: one router and one branch call for the one turn.
    expect(llm.count("router")).toBe(1);
    expect(llm.count("branch")).toBe(1);

    const rows = await sql<{ seq: number; role: string; text: string; run_id: string }[]>`
      select seq, role, text, run_id from messages where conversation_id = ${thread} order by seq`;
    expect(rows.map((r) => [r.seq, r.role])).toEqual([
      [1, "user"],
      [2, "assistant"],
      [3, "user"],
      [4, "assistant"],
    ]);
    expect(rows[2]!.run_id).toBe(runId);
    expect(texts).toContain(rows[2]!.text);
    const runs = await sql<
      { status: string; n: number }[]
    >`select status, count(*)::int as n from runs where conversation_id = ${thread} group by status order by status`;
    expect(runs).toEqual([{ status: "completed", n: 2 }]);
    console.log(
      `clinic: 1 of ${N} concurrent messages ran, ${rejected.length} got 409 conversation_busy; model calls: ${llm.count()}`,
    );
  }, 180_000);

  it(`${N} concurrent answers to one Workbench clarification: exactly one applies, the rest get 409 conflict`, async () => {
    llm.reset();
    const conv = await newConversation(a.url);
    llm.script("reranker", '{"choice": "clarify"}');
    const r = await postSse(`${a.url}/v1/workbench/conversations/${conv}/messages`, {
      text: "Покажи композицию «Расчёт скидки»",
      workspace,
    });
    const q = ev(r, "clarification_required")[0]!;
    expect(q?.candidates?.length).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < N; i++) llm.script("answer", "Ответ.");
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        postSse(`${(i % 2 ? b : a).url}/v1/workbench/conversations/${conv}/messages`, {
          text: `вариант ${i}`,
          workspace,
          interactionId: q.interactionId,
          replyToClarificationId: q.id,
          selectedCandidateId: q.candidates[i % 2].candidateId,
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
    const it1 = (await (await fetch(`${b.url}/v1/workbench/interactions/${q.interactionId}`)).json()) as {
      status: string;
      clarifications: { status: string }[];
    };
    expect(it1.status).toBe("completed");
    expect(it1.clarifications.map((c) => c.status)).toEqual(["answered"]);
    const [users] = await sql<
      { n: number }[]
    >`select count(*)::int as n from messages where conversation_id = ${conv} and role = 'user'`;
    expect(users!.n).toBe(2);
  }, 180_000);
});
