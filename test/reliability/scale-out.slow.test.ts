import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHaproxy, type Haproxy } from "../../scripts/haproxy";
import { onServer } from "../utils/db";
import { ensureHaproxy } from "../utils/haproxy";
import type { ScriptedLlm } from "../utils/scripted-llm";
import { postSse, readSse, type SseEvent } from "../utils/sse";
import { freePort, useServerProcesses, type ServerProcess } from "./processes";
import { openSse, tokens } from "./sse-live";
import { clinicApi } from "../utils/clinic-api";

/**
 * Scale-out (doc/scale-out.md): three server processes (`node --import tsx main.ts`) on one
 * PostgreSQL database behind HAProxy (scripts/haproxy.ts: affinity by conversation id, /readyz
 * health checks, redispatch). Every request of a conversation — its turns, its reads and the
 * follower of its run (X-Conversation-Id) — lands on one process (X-Served-By, and HAProxy's own
 * counts on its stats socket); a follower on another process still follows the live run through
 * LISTEN/NOTIFY; concurrent messages to one conversation: one runs, the rest 409 from every
 * process; a client leaving is seen behind the balancer; kill -9 of the serving process: health
 * checks take it out, a survivor closes the run on resume and serves the conversation from then
 * on. PostgreSQL only: PGlite is one process.
 */
const N = 3;
const missing = onServer ? ensureHaproxy() : null;
if (missing) {
  if (process.env.CI) throw new Error(missing);
  console.warn(`scale-out.slow.test.ts skipped: ${missing}`);
}
let llm: ScriptedLlm;
let servers: ServerProcess[] = [];
let proxy: Haproxy;
let sql: postgres.Sql;

type Thread = { threadId: string; messages: { role: string; text: string }[] };

/** The process (index into `servers`) HAProxy sent a request to: `X-Served-By: app<i+1>`. */
const servedBy = (r: { headers: Headers }) => Number(r.headers.get("x-served-by")?.replace(/^app/, "")) - 1;

const newThread = () => clinicApi(proxy.url).newThread();

async function thread(id: string): Promise<Thread & { servedBy: number }> {
  const r = await fetch(`${proxy.url}/v1/clinic/threads/${id}`);
  expect(r.status).toBe(200);
  return { ...((await r.json()) as Thread), servedBy: servedBy(r) };
}

function scriptTurn(reply: string | { content: string; chunkDelayMs?: number }) {
  llm.script("router", "general_info");
  llm.script("branch", reply);
}

const post = (id: string, text: string, base = proxy.url) =>
  openSse(`${base}/v1/clinic/threads/${id}/messages`, { text });
/** A run's follower, as client/turn.ts resumes: Last-Event-ID, and the conversation for the balancer. */
const follow = (base: string, runId: string, after: number, conversationId: string) =>
  fetch(`${base}/v1/runs/${runId}/events`, {
    headers: { "last-event-id": String(after), "x-conversation-id": conversationId },
  });
const runIdOf = (events: SseEvent[]) => (events[0]!.data as { runId: string }).runId;
const slowReply = (n: number) => ({ content: "Подробный ответ про подготовку к приёму. ".repeat(n), chunkDelayMs: 40 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runStatus(runId: string): Promise<string> {
  const [r] = await sql<{ status: string }[]>`select status from runs where id = ${runId}`;
  return r!.status;
}

describe.runIf(onServer && !missing)(`scale-out: ${N} server processes behind HAProxy`, () => {
  // A killed run is closed 6 s after its last heartbeat (15 s by default), to keep the test short.
  const fx = useServerProcesses({ RUN_STALE_MS: "6000" }, N);
  llm = fx.llm;
  servers = fx.servers;
  beforeAll(async () => {
    const upstreams = servers.map((s) => s.url);
    proxy = await startHaproxy({ upstreams, port: await freePort(), checkIntervalMs: 250, servedByHeader: true });
    sql = postgres(fx.storage.url!, { max: 2, onnotice: () => {} });
  });
  afterAll(async () => {
    await proxy?.close();
    await sql?.end({ timeout: 2 });
  });

  it("conversations spread over every process; each one's requests land on one", async () => {
    const ids = Array.from({ length: 30 }, () => crypto.randomUUID());
    const owners = await Promise.all(
      ids.map(async (id) => {
        const paths = [`/v1/clinic/threads/${id}`, `/v1/clinic/threads/${id}/events`, `/v1/inbox/conversations/${id}`];
        const served = await Promise.all(paths.map((p) => fetch(`${proxy.url}${p}`).then(servedBy)));
        expect(new Set(served).size).toBe(1);
        return served[0]!;
      }),
    );
    expect(new Set(owners)).toEqual(new Set([0, 1, 2]));
  });

  it("a turn and its follower land on one process; a follower on another process follows the live run", async () => {
    llm.reset();
    const id = await newThread();
    scriptTurn("Здравствуйте! Чем помочь?");
    const first = await post(id, "Добрый день");
    await first.waitFor((all) => all.some((e) => e.event === "done"));
    const owner = servedBy(first);

    scriptTurn(slowReply(20));
    const live = await post(id, "Как подготовиться к приёму?");
    expect(live.status).toBe(200);
    expect(servedBy(live)).toBe(owner);
    let finalAt = Number.NaN;
    void live.waitFor((all) => all.some((e) => e.event === "final"), 60_000).then(() => (finalAt = performance.now()));
    await live.waitFor((all) => tokens(all) >= 3);
    const runId = runIdOf(live.events);
    const lastSeen = Number(live.events.at(-1)!.id);

    // Through the balancer the follower is local (the owner's memory); straight to another
    // process it is remote (stored events, woken by NOTIFY). Both get the same events, live.
    const local = await follow(proxy.url, runId, lastSeen, id);
    expect(servedBy(local)).toBe(owner);
    const other = servers[(owner + 1) % N]!;
    const remote = await follow(other.url, runId, lastSeen, id);
    const firstAt: number[] = [];
    const read = (res: Response, k: number) =>
      readSse(res, { stopAfter: () => ((firstAt[k] ??= performance.now()), false) });
    const [byProxy, byOther] = await Promise.all([read(local, 0), read(remote, 1)]);
    await live.waitFor((all) => all.some((e) => e.event === "done"));

    const after = live.events.filter((e) => Number(e.id) > lastSeen);
    expect(byProxy.events).toEqual(after);
    expect(byOther.events).toEqual(after);
    expect(after.map((e) => e.event).slice(-2)).toEqual(["final", "done"]);
    expect(tokens(after)).toBeGreaterThan(5);
    // Live: each follower's first event came while the turn was still streaming.
    expect(Math.max(...firstAt)).toBeLessThan(finalAt);
    expect(await runStatus(runId)).toBe("completed");
    const t = await thread(id);
    expect(t.servedBy).toBe(owner);
    expect(t.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  }, 120_000);

  it("concurrent messages to one conversation: all through the balancer reach one process; one runs, every process answers 409", async () => {
    llm.reset();
    const id = await newThread();
    scriptTurn({ content: "Ответ на вопрос, который пишется медленно. ".repeat(6), chunkDelayMs: 40 });
    const M = 30;
    const before = await proxy.stats();
    const send = (base: string, i: number) =>
      postSse(`${base}/v1/clinic/threads/${id}/messages`, { text: `Вопрос номер ${i}` });
    // M through HAProxy, and 3 straight to each process (what another balancer's choice would be).
    const direct = servers.flatMap((s, k) => [0, 1, 2].map((j) => send(s.url, M + 3 * k + j)));
    const results = await Promise.all([...Array.from({ length: M }, (_, i) => send(proxy.url, i)), ...direct]);
    const viaProxy = results.slice(0, M);
    const owner = servedBy(viaProxy[0]!);
    expect(new Set(viaProxy.map(servedBy))).toEqual(new Set([owner]));
    // HAProxy's own counters agree: the burst went to the owner only.
    const spread = (await proxy.stats()).map((s, i) => s.sessions - before[i]!.sessions);
    expect(spread).toEqual(servers.map((_, i) => (i === owner ? M : 0)));

    const streamed = results.filter((r) => r.status === 200);
    const rejected = results.filter((r) => r.status === 409);
    expect(streamed).toHaveLength(1);
    expect(rejected).toHaveLength(results.length - 1);
    const runId = streamed[0]!.headers.get("x-run-id");
    expect(streamed[0]!.events.map((e) => e.event).slice(-2)).toEqual(["final", "done"]);
    for (const r of rejected)
      expect(r.json).toMatchObject({ error: { code: "conflict", details: { reason: "conversation_busy", runId } } });
    // Each process rejected some of the messages sent straight to it.
    for (let k = 0; k < N; k++)
      expect(results.slice(M + 3 * k, M + 3 * k + 3).filter((r) => r.status === 409).length).toBeGreaterThan(0);
    expect(llm.count("router")).toBe(1);
    expect(llm.count("branch")).toBe(1);
    expect((await thread(id)).messages).toHaveLength(2);
  }, 120_000);

  it("a client leaving mid-stream is seen by the server behind HAProxy: its run stops, nothing is stored", async () => {
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
    // RUN_DETACH_GRACE_MS=0: the server stops the run as soon as it sees the disconnect. Without
    // HAProxy passing the disconnect on, the run would stream to it to its end and complete.
    const until = Date.now() + 20_000;
    while ((await runStatus(runId)) === "running" && Date.now() < until) await sleep(100);
    expect(await runStatus(runId)).toBe("failed");
    expect((await thread(id)).messages).toHaveLength(0);
  }, 60_000);

  it("kill -9 of the process serving a turn: health checks take it out, a survivor closes the run and serves the conversation", async () => {
    llm.reset();
    const id = await newThread();
    scriptTurn("Здравствуйте! Первичный приём стоит 2000 рублей.");
    const first = await post(id, "Сколько стоит приём?");
    await first.waitFor((all) => all.some((e) => e.event === "done"));
    const before = await thread(id);

    scriptTurn(slowReply(30));
    const turn = await post(id, "А как подготовиться?");
    const victim = servedBy(turn);
    expect(victim).toBe(before.servedBy);
    await turn.waitFor((all) => tokens(all) >= 5);
    const runId = runIdOf(turn.events);
    const lastSeen = Number(turn.events.at(-1)!.id);
    await servers[victim]!.kill();
    // HAProxy breaks the client's connection, as the dead server would have.
    expect(await turn.ended).toBe("broken");
    expect(turn.events.some((e) => e.event === "final" || e.event === "done")).toBe(false);

    // Resumed at once, while HAProxy may still take the victim for up: the refused connection is
    // re-sent to a survivor (redispatch), which follows the run and closes it once the dead
    // owner's heartbeat is stale (RUN_STALE_MS).
    const res = await follow(proxy.url, runId, lastSeen, id);
    expect(res.status).toBe(200);
    expect(servedBy(res)).not.toBe(victim);
    const rest = (await readSse(res)).events;
    expect(rest.map((e) => e.event)).toEqual(["error", "done"]);
    expect(Number(rest[0]!.id)).toBeGreaterThan(lastSeen);
    expect((rest[0]!.data as { code: string }).code).toBe("internal");
    expect(await runStatus(runId)).toBe("failed");
    expect({ ...(await thread(id)), servedBy: victim }).toEqual(before);

    // The health checks (every 250 ms, two failures) have marked it down by now.
    expect((await proxy.stats())[victim]!.status).toMatch(/^DOWN/);
    // The conversation goes on through HAProxy, on one survivor.
    llm.reset();
    const served = new Set<number>();
    for (let i = 0; i < 4; i++) {
      scriptTurn(`Ответ номер ${i}.`);
      const next = await post(id, `Вопрос ${i}`);
      await next.waitFor((all) => all.some((e) => e.event === "done"));
      expect(next.events.some((e) => e.event === "final")).toBe(true);
      served.add(servedBy(next));
    }
    expect(served.size).toBe(1);
    expect(served.has(victim)).toBe(false);
    const now = await thread(id);
    expect(served.has(now.servedBy)).toBe(true);
    expect(now.messages.slice(0, 2)).toEqual(before.messages);
    expect(now.messages.slice(2).map((m) => m.text)).toEqual(
      [0, 1, 2, 3].flatMap((i) => [`Вопрос ${i}`, `Ответ номер ${i}.`]),
    );
  }, 180_000);
});
