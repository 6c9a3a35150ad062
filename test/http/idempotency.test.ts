import { describe, expect, it } from "vitest";
import {
  ConversationBusyError,
  createClient,
  IdempotencyKeyReusedError,
  NotFoundError,
  type EventOf,
  type SharedEvents,
} from "../../client";
import { onServer } from "../utils/db";
import { useTestServer } from "../utils/server";
import { postSse, readSse } from "../utils/sse";
import { registerTestRoutes } from "../utils/test-routes";
import { workspace } from "../systems/workbench/fixtures";
import { clinicApi } from "../utils/clinic-api";

/** issue 16 (Idempotency-Key, X-Run-Id, resume at the end of a run) and issue 18 item 6 (reject before the model). */

const server = useTestServer({ llm: true, extend: registerTestRoutes });
const llm = server.llm;

const newThread = () => clinicApi(server.url).newThread();
const clinicTurn = (reply = "Мы работаем с 8 до 20.", step: Record<string, unknown> = {}) => {
  llm.script("router", "general_info");
  llm.script("branch", { content: reply, ...step });
};
const userMessages = async (conv: string) =>
  (
    await server.db.sql<
      { n: number }[]
    >`select count(*)::int as n from messages where conversation_id = ${conv} and role = 'user'`
  )[0]!.n;

describe(`Idempotency-Key and one run per conversation (${onServer ? "PostgreSQL server" : "PGlite"})`, () => {
  it("the same key replays the same run (its events, same ids) and never calls the model again; the run id is in the headers", async () => {
    llm.reset();
    const thread = await newThread();
    clinicTurn();
    const url = `${server.url}/v1/clinic/threads/${thread}/messages`;
    const first = await postSse(url, { text: "Часы работы?" }, { "idempotency-key": "k-1" });
    expect(first.status).toBe(200);
    const runId = first.headers.get("x-run-id");
    expect(runId).toBe((first.events[0]!.data as { runId: string }).runId);
    expect(first.headers.get("x-conversation-id")).toBe(thread);
    // Key order and whitespace of the body do not make it another request.
    const again = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": "k-1" },
      body: '{ "text" : "Часы работы?" }',
    });
    const replayed = await readSse(again);
    expect(again.headers.get("x-run-id")).toBe(runId);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.events).toEqual(first.events);
    // A retry that saw part of the stream sends Last-Event-ID and gets only the rest.
    const rest = await postSse(url, { text: "Часы работы?" }, { "idempotency-key": "k-1", "last-event-id": "2" });
    expect(rest.events).toEqual(first.events.slice(2));
    expect(llm.count("branch")).toBe(1);
    expect(await userMessages(thread)).toBe(1);
  });

  it("the same key with another body is 409 idempotency_key_reused, nothing runs", async () => {
    llm.reset();
    const thread = await newThread();
    clinicTurn();
    const c = createClient({ baseUrl: server.url });
    await c.clinic.send(thread, "Первый вопрос", { idempotencyKey: "k-2" }).result();
    const err = await c.clinic
      .send(thread, "Другой вопрос", { idempotencyKey: "k-2" })
      .result()
      .catch((e) => e);
    expect(err).toBeInstanceOf(IdempotencyKeyReusedError);
    expect(err).toMatchObject({ status: 409, code: "conflict", reason: "idempotency_key_reused" });
    // The same key on another route is another request too.
    const other = await postSse(
      `${server.url}/v1/clinic/threads/${await newThread()}/messages`,
      { text: "Первый вопрос" },
      { "idempotency-key": "k-2" },
    );
    expect(other.status).toBe(409);
    expect(llm.count("branch")).toBe(1);
    const bad = await postSse(
      `${server.url}/v1/clinic/threads/${thread}/messages`,
      { text: "x" },
      { "idempotency-key": "has space" },
    );
    expect(bad.status).toBe(400);
  });

  it("a key whose run failed (nothing stored) may be sent again and runs a new turn", async () => {
    llm.reset();
    const conv = (
      (await (await fetch(`${server.url}/v1/test/conversations`, { method: "POST" })).json()) as {
        conversationId: string;
      }
    ).conversationId;
    llm.script("answer", { status: 500 }, { status: 500 }, { status: 500 });
    const c = createClient({ baseUrl: server.url, maxRetries: 0 });
    const send = () =>
      c.sendTo<EventOf<SharedEvents & { final: { answer: string } }>>(
        `/v1/test/conversations/${conv}/messages`,
        { text: "Вопрос" },
        { idempotencyKey: "k-3" },
      );
    const failed = await send()
      .result()
      .catch((e) => e);
    expect(failed.name).toBe("RunFailedError");
    expect(failed.code).toBe("model_unavailable");
    llm.script("answer", "Теперь ответ есть.");
    const ok = await send().result();
    expect(ok.final).toMatchObject({ answer: "Теперь ответ есть." });
    expect(await userMessages(conv)).toBe(1);
    const runs = await server.db.sql<
      { status: string }[]
    >`select status from runs where conversation_id = ${conv} order by created_at`;
    expect(runs.map((r) => r.status)).toEqual(["failed", "completed"]);
  });

  it("a clarification answer sent twice with its key is one answer: the retry replays the continuation, not a 409", async () => {
    llm.reset();
    const c = createClient({ baseUrl: server.url });
    const { conversationId } = await c.workbench.create();
    llm.script("reranker", '{"choice": "clarify"}');
    const asked = await c.workbench
      .send(conversationId, { text: "Покажи композицию «Расчёт скидки»", workspace })
      .result();
    const q = asked.clarification!;
    expect(q.candidates.length).toBeGreaterThanOrEqual(2);
    llm.script("answer", "Это [[composition-discount-v1]].", "Второй ответ не должен понадобиться.");
    const answer = { text: "первую", workspace, selectedCandidateId: q.candidates[0]!.candidateId };
    const first = c.workbench.answer(conversationId, q, answer, { idempotencyKey: "k-answer" });
    const one = await first.result();
    const retry = c.workbench.answer(conversationId, q, answer, { idempotencyKey: "k-answer" });
    const two = await retry.result();
    expect(retry.runId).toBe(first.runId);
    expect(two.events).toEqual(one.events);
    expect(one.final).toMatchObject({ status: "completed" });
    expect(llm.count("answer")).toBe(1);
    // Without the key the same answer is the contract's 409 (the clarification is answered).
    const again = await c.workbench
      .answer(conversationId, q, answer)
      .result()
      .catch((e) => e);
    expect(again).toMatchObject({ status: 409, code: "conflict" });
    const it1 = (await c.workbench.interaction(q.interactionId)) as { clarifications: { status: string }[] };
    expect(it1.clarifications.map((x) => x.status)).toEqual(["answered"]);
  });

  it("policy reject: a message while the conversation's turn runs is HTTP 409 conversation_busy before the stream, and no model call", async () => {
    llm.reset();
    const thread = await newThread();
    clinicTurn("Очень медленный ответ. ".repeat(10), { chunkDelayMs: 30 });
    const c = createClient({ baseUrl: server.url });
    const slow = c.clinic.send(thread, "Медленно");
    const it1 = slow[Symbol.asyncIterator]();
    expect((await it1.next()).value).toMatchObject({ event: "run_started" });
    const res = await fetch(`${server.url}/v1/clinic/threads/${thread}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ text: "Второе" }),
    });
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toMatchObject({
      error: { code: "conflict", details: { reason: "conversation_busy", runId: slow.runId } },
    });
    const busy = await c.clinic
      .send(thread, "Третье")
      .result()
      .catch((e) => e);
    expect(busy).toBeInstanceOf(ConversationBusyError);
    expect(busy.runId).toBe(slow.runId);
    while (!(await it1.next()).done);
    expect(llm.count("router")).toBe(1);
    // Once the turn is over the conversation takes messages again.
    clinicTurn();
    expect((await c.clinic.send(thread, "Теперь можно").result()).final?.reply).toBeTruthy();
    expect(await userMessages(thread)).toBe(2);
  });
});

describe("resume at the end of a run", () => {
  it("a finished run resumed at its last id answers 204 at once (in the serving process and from the database); earlier ids replay and close", async () => {
    const thread = await newThread();
    clinicTurn();
    const r = await postSse(`${server.url}/v1/clinic/threads/${thread}/messages`, { text: "Часы?" });
    const runId = r.headers.get("x-run-id")!;
    const last = Number(r.events.at(-1)!.id);
    const t0 = Date.now();
    const end = await fetch(`${server.url}/v1/runs/${runId}/events`, {
      headers: { accept: "text/event-stream", "last-event-id": String(last) },
      signal: AbortSignal.timeout(5000),
    });
    expect(end.status).toBe(204);
    // Still in the serving process's hub (it keeps an ended run 30 s): closes at once too.
    const tail = await readSse(
      await fetch(`${server.url}/v1/runs/${runId}/events`, {
        headers: { "last-event-id": String(last - 1) },
        signal: AbortSignal.timeout(5000),
      }),
    );
    expect(tail.events.map((e) => e.event)).toEqual(["done"]);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("an unknown run: 204 for an EventSource (Accept: text/event-stream), 404 JSON for fetch; the client throws NotFoundError", async () => {
    expect(
      (await fetch(`${server.url}/v1/runs/nope/events`, { headers: { accept: "text/event-stream" } })).status,
    ).toBe(204);
    const res = await fetch(`${server.url}/v1/runs/nope/events`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "not_found", details: { reason: "run_not_found" } } });
    const c = createClient({ baseUrl: server.url });
    const ends: string[] = [];
    for await (const e of c.runs.follow("nope")) ends.push(e.event);
    expect(ends).toEqual([]);
    expect(await c.call("GET", "/v1/runs/nope/stages").catch((e) => e)).toBeInstanceOf(NotFoundError);
  });

  it("Last-Event-ID takes digits only", async () => {
    for (const bad of ["5abc", "99999999999999999999", "-1"]) {
      expect((await fetch(`${server.url}/v1/runs/nope/events`, { headers: { "last-event-id": bad } })).status).toBe(
        400,
      );
    }
  });
});
