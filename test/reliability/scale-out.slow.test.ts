import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRoundRobinProxy, type RoundRobinProxy } from "../../scripts/round-robin-proxy";
import { onServer } from "../utils/db";
import { startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";
import { postSse, readSse, type SseEvent } from "../utils/sse";
import { createStorage, modelEnv, startServerProcess, type ServerProcess, type Storage } from "./processes";
import { openSse, tokens } from "./sse-live";

/**
 * Scale-out (README "Scale-out"): three server processes (`node --import tsx main.ts`) on one
 * PostgreSQL database behind scripts/round-robin-proxy.ts, every request of the test sent through
 * the proxy. A run resumed by Last-Event-ID lands on another process and follows the live run
 * there; concurrent messages to one conversation over all processes: one runs, the rest 409; a
 * client leaving is seen by the server behind the proxy; kill -9 of the process serving a turn:
 * a survivor closes the run when the client resumes, and the conversation goes on. PostgreSQL
 * only: PGlite is one process.
 */
const N = 3;
let llm: ScriptedLlm;
let storage: Storage;
let servers: ServerProcess[] = [];
let proxy: RoundRobinProxy;
let sql: postgres.Sql;

type Thread = { threadId: string; messages: { role: string; text: string }[] };

/** Runs `f` and returns the index of the one upstream the proxy sent its request(s) to last. */
async function via<T>(f: () => Promise<T>): Promise<{ value: T; upstream: number }> {
  const before = proxy.counts();
  const value = await f();
  const after = proxy.counts();
  const hit = after.map((n, i) => n - before[i]!).map((d, i) => (d > 0 ? i : -1));
  return { value, upstream: Math.max(...hit) };
}

async function newThread(): Promise<string> {
  const r = await fetch(`${proxy.url}/v1/clinic/threads`, { method: "POST" });
  expect(r.status).toBe(201);
  return ((await r.json()) as { threadId: string }).threadId;
}

async function thread(id: string): Promise<Thread> {
  const r = await fetch(`${proxy.url}/v1/clinic/threads/${id}`);
  expect(r.status).toBe(200);
  return (await r.json()) as Thread;
}

function scriptTurn(reply: string | { content: string; chunkDelayMs?: number }) {
  llm.script("router", "general_info");
  llm.script("branch", reply);
}

const post = (id: string, text: string) => openSse(`${proxy.url}/v1/clinic/threads/${id}/messages`, { text });
const runIdOf = (events: SseEvent[]) => (events[0]!.data as { runId: string }).runId;
const slowReply = (n: number) => ({ content: "Подробный ответ про подготовку к приёму. ".repeat(n), chunkDelayMs: 40 });

async function runStatus(runId: string): Promise<string> {
  const [r] = await sql<{ status: string }[]>`select status from runs where id = ${runId}`;
  return r!.status;
}

describe.runIf(onServer)(`scale-out: ${N} server processes behind the round-robin proxy`, () => {
  beforeAll(async () => {
    llm = await startScriptedLlm();
    storage = await createStorage();
    // One first (it applies the migrations; the others would wait on its advisory lock), then the rest.
    servers = [await startServerProcess(storage, modelEnv(llm))];
    servers.push(
      ...(await Promise.all(Array.from({ length: N - 1 }, () => startServerProcess(storage, modelEnv(llm))))),
    );
    proxy = await startRoundRobinProxy({ upstreams: servers.map((s) => s.url) });
    sql = postgres(storage.url!, { max: 2, onnotice: () => {} });
  }, 240_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    await proxy?.close();
    await sql?.end({ timeout: 2 });
    await llm?.close();
    await storage?.drop();
  });

  it("a turn resumed by Last-Event-ID through the proxy lands on another process and follows the live run", async () => {
    llm.reset();
    const id = await newThread();
    scriptTurn("Здравствуйте! Чем помочь?");
    const first = await post(id, "Добрый день");
    await first.waitFor((all) => all.some((e) => e.event === "done"));

    scriptTurn(slowReply(20));
    const { value: live, upstream: served } = await via(() => post(id, "Как подготовиться к приёму?"));
    expect(live.status).toBe(200);
    let finalAt = Number.NaN;
    void live.waitFor((all) => all.some((e) => e.event === "final"), 60_000).then(() => (finalAt = performance.now()));
    await live.waitFor((all) => tokens(all) >= 3);
    const runId = runIdOf(live.events);
    const lastSeen = Number(live.events.at(-1)!.id);

    const res = await fetch(`${proxy.url}/v1/runs/${runId}/events`, { headers: { "last-event-id": String(lastSeen) } });
    expect(res.status).toBe(200);
    const follower = Number(res.headers.get("x-upstream"));
    expect(follower).not.toBe(served);
    let firstAt = Number.NaN;
    const resumed = await readSse(res, {
      stopAfter: () => {
        if (Number.isNaN(firstAt)) firstAt = performance.now();
        return false;
      },
    });
    await live.waitFor((all) => all.some((e) => e.event === "done"));

    // The follower on the other process got exactly what the serving process sent after lastSeen…
    const after = live.events.filter((e) => Number(e.id) > lastSeen);
    expect(resumed.events).toEqual(after);
    expect(resumed.events.map((e) => e.event).slice(-2)).toEqual(["final", "done"]);
    expect(tokens(resumed.events)).toBeGreaterThan(5);
    // …live: its first event came while the turn was still streaming, not replayed after it.
    expect(firstAt).toBeLessThan(finalAt);
    expect(await runStatus(runId)).toBe("completed");
    expect((await thread(id)).messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  }, 120_000);

  it("concurrent messages to one conversation over every process: one runs, the rest get 409 conversation_busy", async () => {
    llm.reset();
    const id = await newThread();
    scriptTurn({ content: "Ответ на вопрос, который пишется медленно. ".repeat(6), chunkDelayMs: 40 });
    const M = 30;
    const before = proxy.counts();
    const results = await Promise.all(
      Array.from({ length: M }, (_, i) =>
        postSse(`${proxy.url}/v1/clinic/threads/${id}/messages`, { text: `Вопрос номер ${i}` }),
      ),
    );
    const spread = proxy.counts().map((n, i) => n - before[i]!);
    // Round robin: every process took its share of the burst.
    for (const d of spread) expect(d).toBe(M / N);
    const streamed = results.filter((r) => r.status === 200);
    const rejected = results.filter((r) => r.status === 409);
    expect(streamed).toHaveLength(1);
    expect(rejected).toHaveLength(M - 1);
    const runId = streamed[0]!.headers.get("x-run-id");
    expect(streamed[0]!.events.map((e) => e.event).slice(-2)).toEqual(["final", "done"]);
    for (const r of rejected)
      expect(r.json).toMatchObject({ error: { code: "conflict", details: { reason: "conversation_busy", runId } } });
    // The rejections came from every process, not only the one running the turn.
    expect(new Set(rejected.map((r) => r.headers.get("x-upstream"))).size).toBe(N);
    expect(llm.count("router")).toBe(1);
    expect(llm.count("branch")).toBe(1);
    expect((await thread(id)).messages).toHaveLength(2);
  }, 120_000);

  it("a client leaving mid-stream is seen by the server behind the proxy: its run stops, nothing is stored", async () => {
    llm.reset();
    const id = await newThread();
    scriptTurn(slowReply(20));
    const ac = new AbortController();
    const res = await fetch(`${proxy.url}/v1/clinic/threads/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ text: "Вопрос, ответ на который не дождутся" }),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const runId = res.headers.get("x-run-id")!;
    expect(runId).toBeTruthy();
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/event: token/g) ?? []).length < 3)
      text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    // RUN_DETACH_GRACE_MS=0: the server stops the run as soon as it sees the disconnect. Without the
    // proxy passing the disconnect on, the run would stream to the proxy to its end and complete.
    const until = Date.now() + 20_000;
    while ((await runStatus(runId)) === "running" && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(await runStatus(runId)).toBe("failed");
    expect((await thread(id)).messages).toHaveLength(0);
  }, 60_000);

  it("kill -9 of the process serving a turn: a survivor closes the run on resume, the conversation goes on through the proxy", async () => {
    llm.reset();
    const id = await newThread();
    scriptTurn("Здравствуйте! Первичный приём стоит 2000 рублей.");
    const first = await post(id, "Сколько стоит приём?");
    await first.waitFor((all) => all.some((e) => e.event === "done"));
    const before = await thread(id);

    scriptTurn(slowReply(30));
    const { value: turn, upstream: victim } = await via(() => post(id, "А как подготовиться?"));
    await turn.waitFor((all) => tokens(all) >= 5);
    const runId = runIdOf(turn.events);
    const lastSeen = Number(turn.events.at(-1)!.id);
    await servers[victim]!.kill();
    // The proxy breaks the client's connection, as the dead server would have.
    expect(await turn.ended).toBe("broken");
    expect(turn.events.some((e) => e.event === "final" || e.event === "done")).toBe(false);

    // Resumed through the proxy: a survivor follows the run and closes it once the dead owner's
    // heartbeat is stale (15 s); a request the proxy first sends to the dead process is re-sent.
    const res = await fetch(`${proxy.url}/v1/runs/${runId}/events`, { headers: { "last-event-id": String(lastSeen) } });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get("x-upstream"))).not.toBe(victim);
    const rest = (await readSse(res)).events;
    expect(rest.map((e) => e.event)).toEqual(["error", "done"]);
    expect(Number(rest[0]!.id)).toBeGreaterThan(lastSeen);
    expect((rest[0]!.data as { code: string }).code).toBe("internal");
    expect(await runStatus(runId)).toBe("failed");
    expect(await thread(id)).toEqual(before);

    // The conversation goes on through the proxy, served by the survivors in turn.
    llm.reset();
    const served = new Set<number>();
    for (let i = 0; i < 4; i++) {
      scriptTurn(`Ответ номер ${i}.`);
      const { value: next, upstream } = await via(() => post(id, `Вопрос ${i}`));
      await next.waitFor((all) => all.some((e) => e.event === "done"));
      expect(next.events.some((e) => e.event === "final")).toBe(true);
      served.add(upstream);
    }
    expect(served.has(victim)).toBe(false);
    expect(served.size).toBe(N - 1);
    const now = await thread(id);
    expect(now.messages.slice(0, 2)).toEqual(before.messages);
    expect(now.messages.slice(2).map((m) => m.text)).toEqual(
      [0, 1, 2, 3].flatMap((i) => [`Вопрос ${i}`, `Ответ номер ${i}.`]),
    );
  }, 180_000);
});
