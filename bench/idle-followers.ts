import { spawn } from "node:child_process";
import postgres from "postgres";
import { childServerEnv } from "./backends";
import { cpuOf, freePort, untilHealthy } from "./procs";
import { committedTransactions } from "./sql-count";
import { percentile } from "./stats";

/**
 * Issue 47: followers cost nothing while nothing happens. A server process (`node --import tsx
 * main.ts`, offline model) on each backend; FOLLOWERS thread followers are opened, each on a
 * thread of its own where nobody talks, and left idle; the turns go to 50 other threads. Reported: the server's database transactions per second while idle
 * (PostgreSQL: pg_stat_database.xact_commit; PGlite: the server's CPU time while idle, since its
 * statements cannot be counted from outside), the server's memory per follower (goal: ≤ 20 KB) —
 * its RSS and its heap + external memory, both after a full collection (the server runs under
 * `--inspect` on loopback; the bench asks it for the collection over the DevTools protocol) —
 * and a clinic turn's p50 with no follower and with all of them open (goal: within 1.2×).
 *
 * `npx tsx bench/idle-followers.ts [--followers=2000] [--backend=pglite,postgres] [--turns=40] [--idle-s=5]`
 * (PostgreSQL: BENCH_DATABASE_URL or DATABASE_URL, a scratch database is created and dropped).
 */
const argv = process.argv.slice(2);
const opt = (k: string, d: string) => argv.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3) ?? d;
const FOLLOWERS = Number(opt("followers", "2000"));
const TURNS = Number(opt("turns", "40"));
const IDLE_S = Number(opt("idle-s", "5"));
const backends = opt("backend", "pglite,postgres").split(",");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The DevTools protocol of the server process: a full collection, then its process.memoryUsage(). */
async function inspector(port: number): Promise<{ collect(): Promise<NodeJS.MemoryUsage>; close(): void }> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const ws = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((r, j) => {
    ws.onopen = r;
    ws.onerror = j;
  });
  let id = 0;
  const pending = new Map<number, (v: unknown) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  };
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((r) => {
      pending.set(++id, r);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    async collect() {
      for (let i = 0; i < 2; i++) await call("HeapProfiler.collectGarbage");
      await sleep(200);
      const r = (await call("Runtime.evaluate", {
        expression: "JSON.stringify(process.memoryUsage())",
        returnByValue: true,
      })) as { result: { value: string } };
      return JSON.parse(r.result.value) as NodeJS.MemoryUsage;
    },
    close: () => ws.close(),
  };
}

async function turnP50(url: string, threads: string[]): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    const t0 = performance.now();
    const r = await fetch(`${url}/v1/clinic/threads/${threads[i % threads.length]}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: `Сколько стоит приём? ${i}` }),
    });
    const text = await r.text();
    if (!text.includes("event: done")) throw new Error(`turn ${i} did not end: ${text.slice(0, 200)}`);
    times.push(performance.now() - t0);
  }
  return percentile(
    times.sort((a, b) => a - b),
    0.5,
  );
}

async function run(backend: string): Promise<void> {
  const { env, dbUrl, close } = await childServerEnv(backend, "warn");
  const port = await freePort();
  const inspectPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [`--inspect=127.0.0.1:${inspectPort}`, "--import", "tsx", "main.ts"], {
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const stops: AbortController[] = [];
  try {
    await untilHealthy(url);
    const threads: string[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await fetch(`${url}/v1/clinic/threads`, { method: "POST" });
      threads.push(((await r.json()) as { threadId: string }).threadId);
    }
    const quiet: string[] = [];
    for (let i = 0; i < FOLLOWERS; i++) {
      const r = await fetch(`${url}/v1/clinic/threads`, { method: "POST" });
      quiet.push(((await r.json()) as { threadId: string }).threadId);
    }
    await turnP50(url, threads); // warm-up
    // The server's CPU per turn beside the wall-clock p50: on a machine busy with other work the
    // p50 swings with the neighbours' load, the CPU a turn costs the server much less.
    let cpu = cpuOf(child.pid!);
    const p50None = await turnP50(url, threads);
    const cpuNone = (cpuOf(child.pid!) - cpu) / TURNS;
    await sleep(2_000);
    const devtools = await inspector(inspectPort);
    const memBefore = await devtools.collect();
    for (let i = 0; i < FOLLOWERS; i++) {
      const stop = new AbortController();
      stops.push(stop);
      const r = await fetch(`${url}/v1/clinic/threads/${quiet[i]}/events`, {
        headers: { accept: "text/event-stream" },
        signal: stop.signal,
      });
      void r.body
        ?.getReader()
        .read()
        .catch(() => {});
    }
    await sleep(3_000);
    const memAfter = await devtools.collect();
    devtools.close();
    const perFollower = (k: "rss" | "heap") =>
      (k === "rss"
        ? memAfter.rss - memBefore.rss
        : memAfter.heapUsed + memAfter.external - memBefore.heapUsed - memBefore.external) /
      FOLLOWERS /
      1024;
    const stats = dbUrl ? postgres(dbUrl, { max: 1, onnotice: () => {} }) : null;
    const commits = () => committedTransactions(stats!);
    // An idle backend reports its counts up to 10 s late (PGSTAT_IDLE_INTERVAL): the followers'
    // first reads must land before the window opens, the window's own before it is read.
    if (stats) await sleep(11_000);
    const c0 = stats ? await commits() : 0;
    const cpu0 = cpuOf(child.pid!);
    await sleep(IDLE_S * 1000);
    const cpu1 = cpuOf(child.pid!);
    if (stats) await sleep(11_000);
    const c1 = stats ? await commits() : 0;
    await stats?.end();
    cpu = cpuOf(child.pid!);
    const p50With = await turnP50(url, threads);
    const cpuWith = (cpuOf(child.pid!) - cpu) / TURNS;
    console.log(
      [
        `${backend}: ${FOLLOWERS} idle thread followers`,
        stats
          ? `  database transactions while idle: ${((c1 - c0) / IDLE_S).toFixed(1)}/s (${c1 - c0} in ${IDLE_S} s, this bench's own reads included)`
          : null,
        `  server CPU while idle: ${(((cpu1 - cpu0) / (IDLE_S * 1000)) * 100).toFixed(1)}% of a core`,
        `  server memory per follower after a full collection: RSS ${perFollower("rss").toFixed(1)} KB, heap + external ${perFollower("heap").toFixed(1)} KB (${((memAfter.rss - memBefore.rss) / 2 ** 20).toFixed(1)} MB RSS for ${FOLLOWERS})`,
        `  clinic turn p50: ${p50None.toFixed(1)} ms with no follower, ${p50With.toFixed(1)} ms with ${FOLLOWERS} (${(p50With / p50None).toFixed(2)}×)`,
        `  server CPU per turn: ${cpuNone.toFixed(1)} ms with no follower, ${cpuWith.toFixed(1)} ms with ${FOLLOWERS} (${(cpuWith / cpuNone).toFixed(2)}×)`,
      ]
        .filter(Boolean)
        .join("\n"),
    );
  } finally {
    for (const s of stops) s.abort();
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    await close();
  }
}

for (const b of backends) await run(b);
