import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import postgres from "postgres";
import { openDatabase } from "../storage/db";
import { startFloorHttp } from "./floor-http";
import { HttpClient } from "./http";
import { startLoopbackModel } from "./model";
import { pacedScript } from "./paced";
import { metricTotal, phasesFromMetrics, phaseSummary, type PhaseReading } from "./phases";
import { cpuOf, machineCpu, rssOf, spawnProc, type Proc } from "./procs";
import { lanes, ms, perSec, ratio, sleep, summarize } from "./stats";
import { checkedTurn, clinicTarget, floorHttpTarget, type Target } from "./targets";

/**
 * The paced mode with every part in its own process, as the peer harness runs it (issue 33):
 * the scripted model, FLOOR-HTTP, the engine (`node dist/main.js`, what `npm start` runs) and
 * this load client. Per load and server: throughput, turn and first-token p50/p99, the server
 * process's CPU share (1.0 = its event loop never idle) and CPU per turn, PostgreSQL's CPU per
 * turn (the backends of the server's database), the server's peak RSS and its growth per added
 * open stream between levels, the cores busy on the whole machine, and the engine's turn phases
 * from its /metrics.
 *
 *   npm run build && npx tsx bench/paced-procs.ts [--concs 100,200,800] [--token-gap 40] [--window-s 12] [--ramp-s 6]
 *
 * Needs a PostgreSQL server (DATABASE_URL, default the local test server); creates and drops its
 * own scratch databases. Children: `--child model|floor` (this file).
 */
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const ADMIN = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const dbUrl = (name: string) => {
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  return u.toString();
};

async function child(kind: string): Promise<void> {
  if (kind === "model") {
    const m = await startLoopbackModel(pacedScript(Number(arg("token-gap", "40"))));
    console.log(`ready ${m.baseURL}`);
  } else {
    const db = await openDatabase({ url: arg("db", ""), migrate: false });
    const f = await startFloorHttp(db.sql, arg("model", ""));
    console.log(`ready ${f.url}`);
  }
}

function start(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ p: ChildProcess; url: string }> {
  const p = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const seen = (d: Buffer) => {
      out += d;
      const m = /ready (\S+)/.exec(out) ?? /listening on (http:\/\/\S+)/i.exec(out);
      if (m) resolve({ p, url: m[1]! });
    };
    p.stdout!.on("data", seen);
    p.stderr!.on("data", (d) => (out += d));
    p.once("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}: ${out.slice(-1500)}`)));
  });
}

interface Server {
  name: "FLOOR-HTTP" | "ENGINE";
  pid: number;
  url: string;
  db: string;
  target: Target;
  /** RSS once started, before any load. */
  idleRss: number;
}

async function measure(s: Server, admin: postgres.Sql, n: number, rampMs: number, windowMs: number) {
  const ids = await Promise.all(Array.from({ length: n }, () => s.target.create()));
  const pgPids = (await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${s.db}`).map(
    (r) => r.pid,
  );
  const pgCpu = () => pgPids.reduce((a, pid) => a + (existsSync(`/proc/${pid}`) ? cpuOf(pid) : 0), 0);
  const scrape = async () => {
    if (s.name !== "ENGINE") return { phases: new Map() as PhaseReading, sse: [0, 0, 0] };
    const text = await (await fetch(`${s.url}/metrics`)).text();
    const sse = ["ds_sse_writes_total", "ds_sse_write_wait_seconds_count", "ds_sse_write_wait_seconds_sum"];
    return { phases: phasesFromMetrics(text), sse: sse.map((n) => metricTotal(text, n)) };
  };
  const turns: number[] = [];
  const ttft: number[] = [];
  let counted = 0;
  let c0 = 0;
  let g0 = 0;
  let m0 = machineCpu();
  let p0: Awaited<ReturnType<typeof scrape>> = { phases: new Map(), sse: [0, 0, 0] };
  let t0 = 0;
  let i = 0;
  let rssPeak = 0;
  const sampler = setInterval(() => {
    if (t0 > 0) rssPeak = Math.max(rssPeak, rssOf(s.pid));
  }, 100);
  const opened = sleep(rampMs).then(async () => {
    p0 = await scrape();
    c0 = cpuOf(s.pid);
    g0 = pgCpu();
    m0 = machineCpu();
    t0 = performance.now();
  });
  const end = performance.now() + rampMs + windowMs;
  const r = await lanes(n, rampMs + windowMs, async (lane) => {
    const start = performance.now();
    let first = Number.NaN;
    await checkedTurn(s.target, ids[lane]!, `Здравствуйте, вопрос ${i++}: сколько стоит первичный приём?`, (e) => {
      if (e.event === "token" && Number.isNaN(first)) first = performance.now() - start;
    });
    const done = performance.now();
    if (t0 > 0 && start >= t0 && done <= end) {
      turns.push(done - start);
      ttft.push(first);
    }
    if (t0 > 0 && done <= end) counted++;
  });
  await opened;
  clearInterval(sampler);
  const elapsed = Math.min(performance.now(), end) - t0;
  const cpu = cpuOf(s.pid) - c0;
  const pg = pgCpu() - g0;
  const m1 = machineCpu();
  const p1 = await scrape();
  return {
    tput: counted / (elapsed / 1000),
    count: counted,
    turn: summarize(turns),
    ttft: summarize(ttft),
    errors: r.errors,
    share: cpu / elapsed,
    cpuPerTurn: cpu / Math.max(1, counted),
    pgPerTurn: pg / Math.max(1, counted),
    // Cores busy on the whole machine (server, PostgreSQL, model, this client, anything else).
    machineBusy: ((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)) * cpus().length,
    rssPeak,
    phases: phaseSummary(p0.phases, p1.phases),
    // Socket back-pressure (the engine's /metrics): SSE writes per turn, and those that waited for a client.
    sse: { writes: p1.sse[0]! - p0.sse[0]!, waited: p1.sse[1]! - p0.sse[1]!, waitedS: p1.sse[2]! - p0.sse[2]! },
  };
}

async function main(): Promise<void> {
  const concs = arg("concs", "100,200,800").split(",").map(Number);
  const windowMs = Number(arg("window-s", "12")) * 1000;
  const rampMs = Number(arg("ramp-s", "6")) * 1000;
  const gap = arg("token-gap", "40");
  if (!existsSync("dist/main.js")) throw new Error("dist/main.js is missing: npm run build first");
  const admin = postgres(ADMIN, { max: 2, onnotice: () => {} });
  const dbs = { floor: `bench_procs_floor_${process.pid}`, engine: `bench_procs_engine_${process.pid}` };
  const children: ChildProcess[] = [];
  let engine: Proc | undefined;
  const log = (s: string) => console.log(s);
  try {
    for (const d of Object.values(dbs)) await admin.unsafe(`create database ${d}`);
    const self = ["--import", "tsx", "bench/paced-procs.ts"];
    const model = await start(process.execPath, [...self, "--child", "model", "--token-gap", gap]);
    children.push(model.p);
    const floor = await start(process.execPath, [
      ...self,
      "--child",
      "floor",
      "--db",
      dbUrl(dbs.floor),
      "--model",
      model.url,
    ]);
    children.push(floor.p);
    // What `npm start` runs, with its PORT/HOST set and /readyz awaited by spawnProc.
    engine = await spawnProc(
      ["--enable-source-maps", "dist/main.js"],
      {
        DATABASE_URL: dbUrl(dbs.engine),
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: "bench",
        LLM_MODEL: "bench-other",
        LLM_MODEL_ROUTER: "bench-router",
        LLM_MODEL_BRANCH: "bench-branch",
      },
      "/readyz",
    );
    const server = (name: Server["name"], pid: number, url: string, db: string, target: Target): Server => ({
      name,
      pid,
      url,
      db,
      target,
      idleRss: rssOf(pid),
    });
    const servers = [
      server("FLOOR-HTTP", floor.p.pid!, floor.url, dbs.floor, floorHttpTarget(new HttpClient(floor.url))),
      server("ENGINE", engine.child.pid!, engine.url, dbs.engine, clinicTarget(new HttpClient(engine.url))),
    ];
    // --server-cpus 0: each server process gets these CPUs to itself (run this bench, and so the
    // model, under `taskset -c 1` with PostgreSQL pinned there too): a server on its own core, as
    // when the database and the model are on other machines.
    const serverCpus = arg("server-cpus", "");
    if (serverCpus)
      for (const s of servers)
        execFileSync("taskset", ["-a", "-p", "-c", serverCpus, String(s.pid)], { stdio: "ignore" });
    const pad = (x: string, w = 11) => x.padStart(w);
    log(
      `paced, separate processes — model every ${gap} ms, ${concs.join("/")} in flight, ${rampMs / 1000} s ramp + ${windowMs / 1000} s window; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    log(
      `  ${"in flight".padEnd(10)}${"".padEnd(12)}${pad("turns/s")}${pad("turn p50")}${pad("turn p99")}${pad("TTFT p50")}${pad("TTFT p99")}${pad("errors")}${pad("CPU share")}${pad("CPU/turn")}${pad("PG/turn")}${pad("RSS peak")}${pad("box busy")}${pad("load")}`,
    );
    const peaks: Record<string, [number, number][]> = {};
    for (const n of concs) {
      const res: Record<string, Awaited<ReturnType<typeof measure>>> = {};
      for (const s of servers) {
        await sleep(1000);
        const m = (res[s.name] = await measure(s, admin, n, rampMs, windowMs));
        (peaks[s.name] ??= []).push([n, m.rssPeak]);
        log(
          `  ${String(n).padEnd(10)}${s.name.padEnd(12)}${pad(perSec(m.tput))}${pad(ms(m.turn.p50))}${pad(ms(m.turn.p99))}${pad(ms(m.ttft.p50))}${pad(ms(m.ttft.p99))}${pad(String(m.errors))}${pad(m.share.toFixed(2))}${pad(ms(m.cpuPerTurn))}${pad(ms(m.pgPerTurn))}${pad(`${(m.rssPeak / 2 ** 20).toFixed(0)} MB`)}${pad(`${m.machineBusy.toFixed(2)}/${cpus().length}`)}${pad(loadavg()[0]!.toFixed(1))}`,
        );
        if (s.name === "ENGINE") {
          log(`  ${"".padEnd(22)}server-side phases p50/p99: ${m.phases}`);
          const w = m.sse;
          log(
            `  ${"".padEnd(22)}SSE writes ${(w.writes / Math.max(1, m.count)).toFixed(1)}/turn; waited for a client's socket: ${w.waited} (${w.waited ? ms((w.waitedS * 1000) / w.waited) : "—"} mean)`,
          );
        }
      }
      const f = res["FLOOR-HTTP"]!;
      const e = res.ENGINE!;
      log(
        `  ${String(n).padEnd(10)}${"ENGINE÷FLOOR".padEnd(12)}${pad(ratio(e.tput / f.tput))}${pad(ratio(e.turn.p50 / f.turn.p50))}${pad(ratio(e.turn.p99 / f.turn.p99))}${pad(ratio(e.ttft.p50 / f.ttft.p50))}${pad(ratio(e.ttft.p99 / f.ttft.p99))}${pad("")}${pad(ratio(e.share / f.share))}${pad(ratio(e.cpuPerTurn / f.cpuPerTurn))}${pad(ratio(e.pgPerTurn / f.pgPerTurn))}`,
      );
    }
    // Growth over the idle process at the first level includes warming up (JIT, pools, the heap
    // V8 keeps), so an open stream's memory is the slope between levels: RSS peak per added stream.
    for (const s of servers) {
      const p = peaks[s.name] ?? [];
      const slopes = p
        .slice(1)
        .map(([n, r], i) => `${p[i]![0]}→${n}: ${((r - p[i]![1]) / (n - p[i]![0]) / 1024).toFixed(0)} KB`);
      log(
        `  RSS per open stream, ${s.name}: idle ${(s.idleRss / 2 ** 20).toFixed(0)} MB; per added stream ${slopes.join(", ") || "— (one level)"}`,
      );
    }
  } finally {
    await engine?.stop();
    for (const c of children) c.kill("SIGTERM");
    await sleep(1500);
    for (const d of Object.values(dbs)) await admin.unsafe(`drop database if exists ${d} with (force)`).catch(() => {});
    await admin.end({ timeout: 2 });
  }
}

const kind = process.argv.includes("--child") ? arg("child", "") : null;
if (kind) void child(kind);
else
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
