import { describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import type { ScriptStep } from "../utils/scripted-llm";
import { postSse, type SseResponse } from "../utils/sse";
import { workspace } from "../systems/workbench/fixtures";
import { useServerProcesses } from "./processes";
import { openSse, tokens } from "./sse-live";
import { firstCandidateAnswer, newConversation } from "../systems/workbench/http-workbench-helpers";

/**
 * A Workbench clarification answer and its continuation are one turn (issue 18 item 3), against
 * a real server process: when the continuation does not commit — the answer model fails twice,
 * the client leaves, the process is killed with -9 — the clarification stays open, the plan
 * version is unchanged, no answer message is stored, and the same answer sent again succeeds,
 * leaving exactly one stored answer and one reply.
 */
const backend = onServer ? "PostgreSQL server" : "file-backed PGlite";

const fx = useServerProcesses({ LLM_TIMEOUT_MS: "1500" });
const llm = fx.llm;

const ev = (r: { events: SseResponse["events"] }, name: string) =>
  r.events.filter((e) => e.event === name).map((e) => e.data as Record<string, any>);
type Question = { id: string; interactionId: string; candidates: { candidateId: string }[]; planVersion: number };
type Interaction = {
  status: string;
  planVersion: number;
  clarifications: { status: string; answerMessageId: string | null }[];
};
type Conversation = { messages: { role: string; text: string; meta: Record<string, unknown> }[] };

async function askedQuestion(): Promise<{ conv: string; q: Question }> {
  llm.reset();
  const conv = await newConversation(fx.server.url);
  llm.script("reranker", '{"choice": "clarify"}');
  const r = await postSse(`${fx.server.url}/v1/workbench/conversations/${conv}/messages`, {
    text: "Покажи композицию «Расчёт скидки»",
    workspace,
  });
  const q = ev(r, "clarification_required")[0] as Question | undefined;
  expect(q?.candidates.length).toBeGreaterThanOrEqual(2);
  return { conv, q: q! };
}

/** The one answer every case sends: the first candidate. */
const answerBody = firstCandidateAnswer;
const answer = (conv: string, q: Question) =>
  postSse(`${fx.server.url}/v1/workbench/conversations/${conv}/messages`, answerBody(q));
const interaction = async (q: Question) =>
  (await (await fetch(`${fx.server.url}/v1/workbench/interactions/${q.interactionId}`)).json()) as Interaction;
const conversation = async (conv: string) =>
  (await (await fetch(`${fx.server.url}/v1/workbench/conversations/${conv}`)).json()) as Conversation;

/** Nothing of the answer is stored: the question is still open at the same plan version. */
async function expectUnanswered(conv: string, q: Question) {
  const it = await interaction(q);
  expect(it.status).toBe("awaiting_clarification");
  expect(it.planVersion).toBe(q.planVersion);
  expect(it.clarifications.map((c) => c.status)).toEqual(["open"]);
  const msgs = (await conversation(conv)).messages;
  expect(msgs.map((m) => m.role)).toEqual(["user", "assistant"]);
}

/** The same answer again applies, once, with its reply. */
async function expectResendApplies(
  conv: string,
  q: Question,
  reply: ScriptStep = "Композиция «Расчёт скидки» считает скидку.",
) {
  llm.script("answer", reply);
  let r = await answer(conv, q);
  // After kill -9 on the server the dead run's claim lapses once its heartbeat is stale.
  for (let i = 0; r.status === 409 && i < 30; i++) {
    await new Promise((res) => setTimeout(res, 1_000));
    llm.reset();
    llm.script("answer", reply);
    r = await answer(conv, q);
  }
  expect(r.status).toBe(200);
  expect(ev(r, "error")).toEqual([]);
  expect(ev(r, "final")[0]).toMatchObject({ status: "completed", planVersion: q.planVersion + 1 });
  const it = await interaction(q);
  expect(it).toMatchObject({ status: "completed", planVersion: q.planVersion + 1 });
  expect(it.clarifications.map((c) => c.status)).toEqual(["answered"]);
  const msgs = (await conversation(conv)).messages;
  expect(msgs.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  expect(msgs[2]!.text).toBe("первый вариант");
  expect(msgs[2]!.meta).toMatchObject({ clarificationId: q.id });
  expect(msgs[3]!.meta).toMatchObject({ kind: "answer" });
  expect(String(it.clarifications[0]!.answerMessageId)).toBeTruthy();
  // Answering again now is a conflict: the question is closed.
  expect((await answer(conv, q)).status).toBe(409);
}

describe(`clarification answer + continuation are one turn (${backend}, server process)`, () => {
  it("the answer model fails twice: error, nothing stored; the same answer again succeeds once", async () => {
    const { conv, q } = await askedQuestion();
    llm.script("answer", { status: 500 }, { status: 503 });
    const r = await answer(conv, q);
    expect(r.status).toBe(200);
    expect(ev(r, "error")[0]).toMatchObject({ code: "model_unavailable" });
    expect(r.events.at(-1)!.event).toBe("done");
    expect(llm.count("answer")).toBe(2);
    await expectUnanswered(conv, q);
    await expectResendApplies(conv, q);
  });

  it("a concurrent second answer while the first continuation runs: 409 before any model call", async () => {
    const { conv, q } = await askedQuestion();
    llm.script("answer", { content: "Медленный ответ про композицию. ".repeat(20), chunkDelayMs: 30 });
    const first = await openSse(`${fx.server.url}/v1/workbench/conversations/${conv}/messages`, answerBody(q));
    await first.waitFor((all) => tokens(all) >= 2);
    const second = await answer(conv, q);
    expect(second.status).toBe(409);
    await first.ended;
    expect(ev(first, "final")[0]).toMatchObject({ status: "completed" });
    expect(llm.count("answer")).toBe(1);
  });

  it("the client leaves during the continuation: nothing stored; the same answer again succeeds once", async () => {
    const { conv, q } = await askedQuestion();
    llm.script("answer", { content: "Ответ, который клиент не дождётся. ".repeat(40), chunkDelayMs: 30 });
    const ac = new AbortController();
    const res = await fetch(`${fx.server.url}/v1/workbench/conversations/${conv}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(answerBody(q)),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    // Wait for the first tokens of the answer, then leave (RUN_DETACH_GRACE_MS=0: the run ends at once).
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes("event: token")) seen += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    await new Promise((r) => setTimeout(r, 500));
    await expectUnanswered(conv, q);
    llm.reset();
    await expectResendApplies(conv, q);
  });

  it("kill -9 during the continuation: after a restart nothing of the answer is stored; the same answer again succeeds once", async () => {
    const { conv, q } = await askedQuestion();
    // No figure in it: a figure the context lacks is refused before a token is shown (the answer check).
    llm.script("answer", { content: "Ответ, который оборвёт остановка процесса. ".repeat(40), chunkDelayMs: 30 });
    const live = await openSse(`${fx.server.url}/v1/workbench/conversations/${conv}/messages`, answerBody(q));
    await live.waitFor((all) => tokens(all) >= 3);
    await fx.server.kill();
    await live.ended;
    await fx.start();
    await expectUnanswered(conv, q);
    llm.reset();
    await expectResendApplies(conv, q);
  }, 180_000);
});
