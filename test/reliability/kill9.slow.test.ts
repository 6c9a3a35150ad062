import type { Sql } from "../../storage/db";
import { afterAll, describe, expect, it } from "vitest";
import { listRunEvents } from "../../storage/runs";
// What the server loads: a clinic run's stored `final` names the clinic's meta template (storage/meta-defaults.ts).
import "../../systems";
import { onServer } from "../utils/db";
import { readSse } from "../utils/sse";
import { useProcesses, modelEnv, startServerProcess, type ServerProcess, readStorage } from "./processes";
import { openSse, tokens } from "./sse-live";
import { clinicApi } from "../utils/clinic-api";

/**
 * kill -9 of the server process during a streamed clinic turn, then a restart over the same
 * storage (a file-backed PGlite folder, or a database on the PostgreSQL server): the thread is
 * exactly as before the turn or exactly as after it, the run is marked failed, and a client
 * resuming with Last-Event-ID gets `error` then `done`.
 */
const backend = onServer ? "PostgreSQL server" : "file-backed PGlite";

const fx = useProcesses();
const llm = fx.llm;

type Thread = { threadId: string; state: unknown; messages: { role: string; text: string; meta: unknown }[] };

const newThread = (base: string) => clinicApi(base).newThread();

async function thread(base: string, id: string): Promise<Thread> {
  const r = await fetch(`${base}/v1/clinic/threads/${id}`);
  expect(r.status).toBe(200);
  return (await r.json()) as Thread;
}

const post = (base: string, id: string, text: string) => openSse(`${base}/v1/clinic/threads/${id}/messages`, { text });

/** The run's row, read after the fact: directly on the server; for PGlite once no process holds the folder. */
async function runRow(runId: string): Promise<{ status: string; error_code: string | null; events: string[] }> {
  const read = async (sql: Sql) => {
    const [run] = await sql<
      { status: string; error_code: string | null }[]
    >`select status, error_code from runs where id = ${runId}`;
    const events = await listRunEvents(sql, runId, 0);
    return { status: run!.status, error_code: run!.error_code, events: events.map((e) => e.event) };
  };
  return readStorage(fx.storage, read);
}

async function resume(base: string, runId: string, lastEventId: number) {
  const res = await fetch(`${base}/v1/runs/${runId}/events`, { headers: { "last-event-id": String(lastEventId) } });
  // 204: the run is over and the client already has `done` (doc/clients.md).
  if (res.status === 204) return [];
  expect(res.status).toBe(200);
  return (await readSse(res)).events;
}

function scriptTurn(reply: string | { content: string; chunkDelayMs?: number }) {
  llm.script("router", "general_info");
  llm.script("branch", reply);
}

/** A new thread with one completed turn on `base`; the thread as stored after it. */
async function threadWithOneTurn(base: string, text: string, reply: string) {
  const id = await newThread(base);
  scriptTurn(reply);
  const first = await post(base, id, text);
  await first.waitFor((all) => all.some((e) => e.event === "done"));
  return { id, first, before: await thread(base, id) };
}

describe(`kill -9 during a streamed turn (${backend})`, () => {
  let server: ServerProcess | null = null;
  afterAll(async () => {
    await server?.kill();
  });

  it("mid-stream: thread exactly as before, run failed, resuming client gets error then done", async () => {
    server = await startServerProcess(fx.storage, modelEnv(llm));
    const { id, first, before } = await threadWithOneTurn(
      server.url,
      "Сколько стоит приём?",
      "Здравствуйте! Первичный приём стоит 2000 рублей.",
    );
    expect(first.events.some((e) => e.event === "final")).toBe(true);
    expect(before.messages).toHaveLength(2);

    scriptTurn({ content: "Подробный ответ про подготовку к приёму. ".repeat(30), chunkDelayMs: 40 });
    const turn = await post(server.url, id, "А как подготовиться?");
    await turn.waitFor((all) => tokens(all) >= 5);
    const runId = (turn.events[0]!.data as { runId: string }).runId;
    const lastSeen = Number(turn.events.at(-1)!.id);
    await server.kill();
    await turn.ended;
    expect(turn.events.some((e) => e.event === "final" || e.event === "done")).toBe(false);

    server = await startServerProcess(fx.storage, modelEnv(llm));
    // On the server the new process cannot know the old one is dead until its heartbeat is
    // stale (15 s); the follower closes the run then. PGlite closes it at start-up.
    const rest = await resume(server.url, runId, lastSeen);
    expect(rest.map((e) => e.event)).toEqual(["error", "done"]);
    // Numbered past any id the dead process could have sent (storage/runs.ts MAX_RUN_EVENTS).
    const ids = rest.map((e) => Number(e.id));
    expect(ids[0]).toBeGreaterThan(lastSeen);
    expect(ids[1]).toBe(ids[0]! + 1);
    expect((rest[0]!.data as { code: string }).code).toBe("internal");

    expect(await thread(server.url, id)).toEqual(before);

    // The thread goes on normally after the crash.
    scriptTurn("Возьмите с собой паспорт и полис.");
    const next = await post(server.url, id, "Что взять с собой?");
    await next.waitFor((all) => all.some((e) => e.event === "done"));
    expect(next.events.some((e) => e.event === "final")).toBe(true);
    const after = await thread(server.url, id);
    expect(after.messages.slice(0, 2)).toEqual(before.messages);
    expect(after.messages.slice(2).map((m) => [m.role, m.text])).toEqual([
      ["user", "Что взять с собой?"],
      ["assistant", "Возьмите с собой паспорт и полис."],
    ]);

    // Stopped on both backends: PGlite's folder is read next, and a server left running would
    // outlive the test (the next test starts its own).
    await server.stop();
    server = null;
    const row = await runRow(runId);
    expect(row).toMatchObject({ status: "failed", error_code: "internal" });
    expect(row.events.slice(-2)).toEqual(["error", "done"]);
  }, 180_000);

  it("right after `final`: the turn is stored (final is sent only after the commit)", async () => {
    server = await startServerProcess(fx.storage, modelEnv(llm));
    const { id, before } = await threadWithOneTurn(server.url, "Добрый день", "Здравствуйте!");

    scriptTurn("Запись открыта на завтра.");
    const turn = await post(server.url, id, "Можно записаться?");
    await turn.waitFor((all) => all.some((e) => e.event === "final"));
    const runId = (turn.events[0]!.data as { runId: string }).runId;
    await server.kill();

    server = await startServerProcess(fx.storage, modelEnv(llm));
    const after = await thread(server.url, id);
    expect(after.messages.slice(0, before.messages.length)).toEqual(before.messages);
    expect(after.messages.slice(before.messages.length).map((m) => m.text)).toEqual([
      "Можно записаться?",
      "Запись открыта на завтра.",
    ]);
    const finalId = Number(turn.events.find((e) => e.event === "final")!.id);
    const rest = await resume(server.url, runId, finalId);
    expect(rest.map((e) => e.event)).toEqual(["done"]);
    // Stopped on both backends: PGlite's folder is read next, and a server left running would
    // outlive the test (the next test starts its own).
    await server.stop();
    server = null;
    expect((await runRow(runId)).status).toBe("completed");
  }, 180_000);

  it("at arbitrary moments of a turn: the thread is always exactly before or exactly after it", async () => {
    const outcomes: string[] = [];
    for (const delayMs of [10, 150, 600]) {
      llm.reset(); // a request the killed process never sent leaves its scripted reply queued
      server = await startServerProcess(fx.storage, modelEnv(llm));
      const { id, before } = await threadWithOneTurn(server.url, "Здравствуйте", "Добрый день.");

      scriptTurn({ content: "Короткий ответ из нескольких частей.", chunkDelayMs: 15 });
      const turn = await post(server.url, id, "Вопрос");
      await new Promise((r) => setTimeout(r, delayMs));
      await server.kill();
      await turn.ended;

      server = await startServerProcess(fx.storage, modelEnv(llm));
      const now = await thread(server.url, id);
      const committed = now.messages.length === before.messages.length + 2;
      if (committed) {
        expect(now.messages.slice(0, 2)).toEqual(before.messages);
        expect(now.messages.slice(2).map((m) => m.text)).toEqual(["Вопрос", "Короткий ответ из нескольких частей."]);
      } else expect(now).toEqual(before);
      outcomes.push(committed ? "after" : "before");
      const runId = (turn.events[0]?.data as { runId?: string } | undefined)?.runId;
      if (runId) {
        const seen = Number(turn.events.at(-1)!.id);
        const rest = await resume(server.url, runId, seen);
        console.log(
          `kill after ${delayMs} ms: ${committed ? "after" : "before"}; client saw ${turn.events.map((e) => e.event).join(",")}; resumed ${rest.map((e) => `${e.event}:${JSON.stringify(e.data).slice(0, 120)}`).join(",")}`,
        );
        expect(rest.at(-1)?.event ?? "done").toBe("done");
        if (!committed) expect(rest.map((e) => e.event)).toEqual(["error", "done"]);
      }
      await server.stop();
      server = null;
    }
    expect(outcomes).toHaveLength(3);
  }, 300_000);
});
