import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Goal } from "./goals";
import { HttpClient } from "./http";
import type { Pacing } from "./model";
import { diffCounts, startPgProxy, type ProxyCounts } from "./pg-proxy";
import { cpuOfAll, processTree, writeCallsOf, type Child } from "./procs";
import { scratchPostgres, startEngine, startFloor, startModel, type Engine, type Scratch } from "./rig";
import { bytes, lanes, ms, perSec, ratio, sleep, summarize } from "./stats";
import { checkedTurn, clinicTarget, floorHttpTarget, type Target } from "./targets";

/**
 * turn vs FLOOR-HTTP with every part in its own process (issue 46), as users run the engine and
 * as the peer harness measures it: the engine started by `npm start` (build + `node dist/main.js`,
 * its JSON log on a drained pipe), FLOOR-HTTP (bench/floor-http.ts) and the scripted model
 * (chunks one event-loop turn apart by default) in children of their own, this process only the
 * load client. Each server has a database of its own (a scratch database on the PostgreSQL server,
 * or an embedded PGlite). Per server: sequential p50/p99 and first token, throughput at 16 and 64
 * conversations in flight (windows after a ramp, floor and engine alternating), the server
 * process's CPU per turn (/proc, npm included), PostgreSQL's backend CPU per turn (the backends
 * of the server's database), WAL bytes and commit records per turn (pg_walinspect, this
 * database's records only) — each as a ratio to the floor measured in the same run.
 */
export interface TurnProcsOptions {
  quick: boolean;
  log: (line: string) => void;
  pacing: Pacing;
}

type Kind = "floor" | "engine";
const KINDS = ["floor", "engine"] as const;
const LABEL: Record<Kind, string> = { floor: "FLOOR-HTTP", engine: "ENGINE" };
const load = () => loadavg()[0]!.toFixed(1);
const userText = (i: number) =>
  `Здравствуйте, вопрос ${i}: сколько стоит первичный приём и нужно ли что-то взять с собой?`;

interface Server {
  target: Target;
  client: HttpClient;
  /** The server's process tree. */
  pids: number[];
  /** Its PostgreSQL database (null: embedded PGlite, whose CPU is the server's own). */
  db: string | null;
}

/** CPU of the server and of each of its PostgreSQL backends so far, ms. */
async function cpuNow(
  s: Server,
  scratch: Scratch | null,
): Promise<{ server: number; writes: number; pg: Map<number, number> }> {
  const pgPids = scratch && s.db ? await scratch.backendPids(s.db) : [];
  return {
    server: cpuOfAll(s.pids),
    writes: s.pids.reduce((a, p) => a + writeCallsOf(p), 0),
    pg: new Map(pgPids.map((p) => [p, cpuOfAll([p])])),
  };
}

/** CPU between two readings; a backend that connected in between counts from its start, one gone is lost. */
function cpuBetween(a: Awaited<ReturnType<typeof cpuNow>>, b: Awaited<ReturnType<typeof cpuNow>>): Cpu {
  let pg = 0;
  for (const [p, v] of b.pg) pg += v - (a.pg.get(p) ?? 0);
  return { server: b.server - a.server, writes: b.writes - a.writes, pg };
}

interface Cpu {
  server: number;
  /** The server's write system calls (socket writes to the client, the model and the database; log lines). */
  writes: number;
  pg: number;
}

/** n lanes for ramp + window; turns completed inside the window count, CPU read at its two ends. */
async function measureWindow(s: Server, scratch: Scratch | null, ids: string[], rampMs: number, windowMs: number) {
  let counted = 0;
  let open = false;
  let t0 = 0;
  let c0: Awaited<ReturnType<typeof cpuNow>> = { server: 0, writes: 0, pg: new Map() };
  let end = Number.POSITIVE_INFINITY;
  const lat: number[] = [];
  let i = 0;
  const opened = sleep(rampMs).then(async () => {
    c0 = await cpuNow(s, scratch);
    t0 = performance.now();
    end = t0 + windowMs;
    open = true;
  });
  const closed = opened.then(async () => {
    await sleep(windowMs);
    open = false;
    const c1 = cpuNow(s, scratch);
    return { at: performance.now(), c1: await c1 };
  });
  const r = await lanes(ids.length, rampMs + windowMs, async (lane) => {
    const start = performance.now();
    await checkedTurn(s.target, ids[lane]!, userText(i++));
    const done = performance.now();
    if (open && done <= end) {
      counted++;
      if (start >= t0) lat.push(done - start);
    }
  });
  const { at, c1 } = await closed;
  return {
    turns: counted,
    ms: at - t0,
    errors: r.errors,
    lat,
    cpu: cpuBetween(c0, c1),
  };
}

export async function benchTurnProcs(backend: "pglite" | "postgres", o: TurnProcsOptions): Promise<Goal[]> {
  const { log } = o;
  const rounds = o.quick ? 2 : 3;
  const seqPerRound = o.quick ? 20 : 60;
  const windows = o.quick ? 1 : 3;
  const rampMs = o.quick ? 300 : 1000;
  const windowMs = o.quick ? 1500 : 4000;
  const tmp = mkdtempSync(join(tmpdir(), "bench-procs-"));
  const stops: (() => Promise<void>)[] = [];
  let scratch: Scratch | null = null;
  try {
    scratch = backend === "postgres" ? await scratchPostgres() : null;
    const dbs: Record<Kind, string | null> = {
      floor: scratch ? await scratch.create("floor") : null,
      engine: scratch ? await scratch.create("engine") : null,
    };
    const where = (k: Kind) => (scratch ? { url: scratch.url(dbs[k]!) } : { dir: join(tmp, k) });
    const model: Child = await startModel(o.pacing);
    stops.push(model.stop);
    const floor = await startFloor(model.url, where("floor"));
    stops.push(floor.stop);
    const t = performance.now();
    const engine: Engine = await startEngine(model.url, where("engine"));
    stops.push(engine.stop);
    const startS = (performance.now() - t) / 1000;
    const clients = { floor: new HttpClient(floor.url), engine: new HttpClient(engine.url) };
    const servers: Record<Kind, Server> = {
      floor: {
        client: clients.floor,
        target: floorHttpTarget(clients.floor),
        pids: processTree(floor.child.pid!),
        db: dbs.floor,
      },
      engine: { client: clients.engine, target: clinicTarget(clients.engine), pids: engine.pids, db: dbs.engine },
    };
    stops.push(async () => {
      for (const k of KINDS) servers[k].client.close();
    });
    log(
      `turn vs FLOOR-HTTP, separate processes — ${backend}: the engine by \`npm start\` (started in ${startS.toFixed(1)} s incl. the build), FLOOR-HTTP and the model (${o.pacing === "tick" ? "chunks one event-loop turn apart" : "each reply in one write"}) in their own processes; load average ${load()}`,
    );

    // Warm-up: JIT, pools, prepared statements; a short burst fills the pools.
    for (const k of KINDS) {
      const s = servers[k];
      const id = await s.target.create();
      for (let i = 0; i < (o.quick ? 15 : 40); i++) await checkedTurn(s.target, id, userText(i));
      const ids = await Promise.all(Array.from({ length: 16 }, () => s.target.create()));
      let i = 0;
      await lanes(16, o.quick ? 500 : 2000, (l) => checkedTurn(s.target, ids[l]!, userText(i++)));
    }

    // Sequential rounds, floor and engine alternating; WAL of both databases over the same LSN range.
    const seq: Record<Kind, { total: number[]; ttft: number[]; cpu: Cpu }> = {
      floor: { total: [], ttft: [], cpu: { server: 0, writes: 0, pg: 0 } },
      engine: { total: [], ttft: [], cpu: { server: 0, writes: 0, pg: 0 } },
    };
    const seqIds: Record<Kind, string[]> = { floor: [], engine: [] };
    for (const k of KINDS) for (let r = 0; r < rounds; r++) seqIds[k].push(await servers[k].target.create());
    const lsn0 = scratch ? await scratch.insertLsn() : null;
    const seqLoad: string[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const k of r % 2 === 0 ? KINDS : ([...KINDS].reverse() as Kind[])) {
        const s = servers[k];
        const c0 = await cpuNow(s, scratch);
        for (let i = 0; i < seqPerRound; i++) {
          const t0 = performance.now();
          let ttft = Number.NaN;
          await checkedTurn(s.target, seqIds[k][r]!, userText(i), (e) => {
            if (e.event === "token" && Number.isNaN(ttft)) ttft = performance.now() - t0;
          });
          seq[k].total.push(performance.now() - t0);
          seq[k].ttft.push(ttft);
        }
        const c = cpuBetween(c0, await cpuNow(s, scratch));
        seq[k].cpu.server += c.server;
        seq[k].cpu.writes += c.writes;
        seq[k].cpu.pg += c.pg;
      }
      seqLoad.push(load());
    }
    const lsn1 = scratch ? await scratch.insertLsn() : null;
    const seqTurns = rounds * seqPerRound;
    const wal: Record<Kind, { bytes: number; commits: number } | null> = { floor: null, engine: null };
    if (scratch && lsn0 && lsn1) for (const k of KINDS) wal[k] = await scratch.wal(dbs[k]!, lsn0, lsn1);

    // Throughput at 16 and 64 in flight, windows alternating.
    const conc: Record<Kind, Record<number, { tput: number; cpu: Cpu; p50: number; p99: number }>> = {
      floor: {},
      engine: {},
    };
    const concLoad: Record<number, string[]> = {};
    for (const n of [16, 64]) {
      const ids: Record<Kind, string[]> = { floor: [], engine: [] };
      for (const k of KINDS) ids[k] = await Promise.all(Array.from({ length: n }, () => servers[k].target.create()));
      const sums: Record<Kind, { turns: number; ms: number; cpu: Cpu; lat: number[] }> = {
        floor: { turns: 0, ms: 0, cpu: { server: 0, writes: 0, pg: 0 }, lat: [] },
        engine: { turns: 0, ms: 0, cpu: { server: 0, writes: 0, pg: 0 }, lat: [] },
      };
      concLoad[n] = [];
      for (let w = 0; w < windows; w++) {
        for (const k of w % 2 === 0 ? KINDS : ([...KINDS].reverse() as Kind[])) {
          const r = await measureWindow(servers[k], scratch, ids[k], rampMs, windowMs);
          if (r.errors) log(`  ${LABEL[k]} at ${n} in flight: ${r.errors} turn(s) failed`);
          const s = sums[k];
          s.turns += r.turns;
          s.ms += r.ms;
          s.cpu.server += r.cpu.server;
          s.cpu.writes += r.cpu.writes;
          s.cpu.pg += r.cpu.pg;
          s.lat.push(...r.lat);
        }
        concLoad[n]!.push(load());
      }
      for (const k of KINDS) {
        const s = sums[k];
        const l = summarize(s.lat);
        // A window shorter than one turn at this load counts none (PGlite at 64 in flight in --quick): unknown, not 0 or ∞.
        if (s.turns === 0) log(`  ${LABEL[k]} at ${n} in flight: no turn completed inside a window`);
        conc[k][n] = {
          tput: s.turns ? s.turns / (s.ms / 1000) : Number.NaN,
          cpu: s.turns
            ? { server: s.cpu.server / s.turns, writes: s.cpu.writes / s.turns, pg: s.cpu.pg / s.turns }
            : { server: Number.NaN, writes: Number.NaN, pg: Number.NaN },
          p50: l.p50,
          p99: l.p99,
        };
      }
    }

    // What a turn sends the database: each server restarted behind a counting proxy (untimed, an extra hop).
    const stats: Record<Kind, ProxyCounts | null> = { floor: null, engine: null };
    const statsTurns = o.quick ? 10 : 30;
    if (scratch) {
      await engine.stop();
      await floor.stop();
      const u = new URL(scratch.url(dbs.floor!));
      const proxy = await startPgProxy(u.hostname, Number(u.port || 5432));
      stops.push(proxy.close);
      const via = (k: Kind) => {
        const v = new URL(scratch!.url(dbs[k]!));
        v.hostname = "127.0.0.1";
        v.port = String(proxy.port);
        return { url: v.toString() };
      };
      const proxied: Record<Kind, { url: string; stop(): Promise<void> }> = {
        floor: await startFloor(model.url, via("floor")),
        engine: await startEngine(model.url, via("engine")),
      };
      for (const k of KINDS) {
        stops.push(proxied[k].stop);
        const client = new HttpClient(proxied[k].url);
        const t = k === "floor" ? floorHttpTarget(client) : clinicTarget(client);
        const id = await t.create();
        for (let i = 0; i < 2; i++) await checkedTurn(t, id, userText(i));
        const a = proxy.snapshot();
        for (let i = 0; i < statsTurns; i++) await checkedTurn(t, id, userText(i));
        stats[k] = diffCounts(a, proxy.snapshot());
        client.close();
        await proxied[k].stop();
      }
    }

    const sum = {
      floor: { total: summarize(seq.floor.total), ttft: summarize(seq.floor.ttft) },
      engine: { total: summarize(seq.engine.total), ttft: summarize(seq.engine.ttft) },
    };
    const onServer = backend === "postgres";
    const pad = (x: string, n = 11) => x.padStart(n);
    const na = (x: number) => (onServer ? ms(x) : "—");
    const count = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
    log(
      `  ${"".padEnd(15)}${pad("seq p50")}${pad("seq p99")}${pad("TTFT p50")}${pad("@16")}${pad("@64")}${pad("p50 @16")}${pad("p50 @64")}`,
    );
    for (const k of KINDS)
      log(
        `  ${LABEL[k].padEnd(15)}${pad(ms(sum[k].total.p50))}${pad(ms(sum[k].total.p99))}${pad(ms(sum[k].ttft.p50))}${pad(perSec(conc[k][16]!.tput))}${pad(perSec(conc[k][64]!.tput))}${pad(ms(conc[k][16]!.p50))}${pad(ms(conc[k][64]!.p50))}`,
      );
    const rr = (f: (k: Kind) => number) => f("engine") / f("floor");
    const r = {
      p50: rr((k) => sum[k].total.p50),
      p99: rr((k) => sum[k].total.p99),
      ttft: rr((k) => sum[k].ttft.p50),
      t16: rr((k) => conc[k][16]!.tput),
      t64: rr((k) => conc[k][64]!.tput),
      cpuSeq: rr((k) => seq[k].cpu.server / seqTurns),
      cpu16: rr((k) => conc[k][16]!.cpu.server),
      cpu64: rr((k) => conc[k][64]!.cpu.server),
      pgSeq: rr((k) => seq[k].cpu.pg / seqTurns),
      pg16: rr((k) => conc[k][16]!.cpu.pg),
      pg64: rr((k) => conc[k][64]!.cpu.pg),
      wal: wal.engine && wal.floor?.bytes ? wal.engine.bytes / wal.floor.bytes : Number.NaN,
    };
    log(
      `  ${"ENGINE ÷ FLOOR".padEnd(15)}${pad(ratio(r.p50))}${pad(ratio(r.p99))}${pad(ratio(r.ttft))}${pad(ratio(r.t16))}${pad(ratio(r.t64))}${pad(ratio(rr((k) => conc[k][16]!.p50)))}${pad(ratio(rr((k) => conc[k][64]!.p50)))}`,
    );
    log(
      `  per turn:${"".padEnd(6)}${pad("server seq")}${pad("server @16")}${pad("server @64")}${pad("PG seq")}${pad("PG @16")}${pad("PG @64")}${pad("WAL")}${pad("commits")}${pad("writes seq")}${pad("@16")}${pad("@64")}`,
    );
    for (const k of KINDS)
      log(
        `  ${LABEL[k].padEnd(15)}${pad(ms(seq[k].cpu.server / seqTurns))}${pad(ms(conc[k][16]!.cpu.server))}${pad(ms(conc[k][64]!.cpu.server))}${pad(na(seq[k].cpu.pg / seqTurns))}${pad(na(conc[k][16]!.cpu.pg))}${pad(na(conc[k][64]!.cpu.pg))}${pad(wal[k] ? bytes(wal[k]!.bytes / seqTurns) : "n/a")}${pad(wal[k] ? (wal[k]!.commits / seqTurns).toFixed(2) : "n/a")}` +
          `${pad(count(seq[k].cpu.writes / seqTurns))}${pad(count(conc[k][16]!.cpu.writes))}${pad(count(conc[k][64]!.cpu.writes))}`,
      );
    log(
      `  ${"ENGINE ÷ FLOOR".padEnd(15)}${pad(ratio(r.cpuSeq))}${pad(ratio(r.cpu16))}${pad(ratio(r.cpu64))}${pad(onServer ? ratio(r.pgSeq) : "—")}${pad(onServer ? ratio(r.pg16) : "—")}${pad(onServer ? ratio(r.pg64) : "—")}${pad(ratio(r.wal))}${pad("")}` +
        `${pad(ratio(rr((k) => seq[k].cpu.writes)))}${pad(ratio(rr((k) => conc[k][16]!.cpu.writes)))}${pad(ratio(rr((k) => conc[k][64]!.cpu.writes)))}`,
    );
    const per = (k: Kind, f: (c: ProxyCounts) => number) => (stats[k] ? (f(stats[k]!) / statsTurns).toFixed(2) : "n/a");
    const durable = (c: ProxyCounts) => c.writing - c.async;
    if (stats.engine)
      log(
        `  database work per turn (${statsTurns} sequential turns through a counting proxy): ${KINDS.map((k) => `${LABEL[k]} statements ${per(k, (c) => c.statements)}, transactions ${per(k, (c) => c.transactions)}, writing ${per(k, (c) => c.writing)} (durable ${per(k, durable)}, async ${per(k, (c) => c.async)})`).join("; ")}`,
      );
    log(
      `  engine throughput 64 ÷ 16 in flight: ${ratio(conc.engine[64]!.tput / conc.engine[16]!.tput)} (floor ${ratio(conc.floor[64]!.tput / conc.floor[16]!.tput)}); ${seqTurns} sequential turns each, ${windows} × ${windowMs / 1000} s windows per level after ${rampMs / 1000} s ramps`,
    );
    log(
      `  load average (1 min): sequential rounds ${seqLoad.join(", ")}; windows @16 ${concLoad[16]!.join(", ")}; @64 ${concLoad[64]!.join(", ")}`,
    );
    log(
      `  server CPU = the server's process tree (/proc utime+stime; the engine's includes npm, idle); PG = the backends of its database${onServer ? "" : " (embedded PGlite: inside the server's CPU)"}; WAL and commit records = this database's (pg_walinspect), sequential turns; writes = the server's write system calls (/proc/<pid>/io syscw: sockets to the client, the model and the database, and log lines)`,
    );

    const name = (g: string) => `turn.${backend}.vsHttpFloor.${g}`;
    const informational = !onServer;
    // Issue 33's guards (floors not to fall below) and issue 46's goals (the peer harness's table), one run.
    return [
      { name: name("seqP99"), ratio: r.p99, goal: "≤ 1.5× FLOOR-HTTP", ok: r.p99 <= 1.5, informational },
      { name: name("throughput16"), ratio: r.t16, goal: "≥ 0.5× FLOOR-HTTP", ok: r.t16 >= 0.5, informational },
      { name: name("throughput64"), ratio: r.t64, goal: "≥ 0.5× FLOOR-HTTP", ok: r.t64 >= 0.5, informational },
      {
        name: name("throughput64vs16"),
        ratio: r.t64 / r.t16,
        goal: "≥ 0.95 (ratio @64 ÷ ratio @16)",
        ok: r.t64 / r.t16 >= 0.95,
        informational,
      },
      ...(Number.isFinite(r.wal)
        ? [{ name: name("wal"), ratio: r.wal, goal: "≤ 3× FLOOR-HTTP", ok: r.wal <= 3, informational }]
        : []),
      ...(stats.engine
        ? [
            {
              name: name("commits"),
              ratio: durable(stats.engine) / statsTurns,
              goal: "1 durable commit per turn",
              ok: Math.abs(durable(stats.engine) / statsTurns - 1) < 0.001,
            },
          ]
        : []),
      ...(
        [
          ["serverCpuSeq", r.cpuSeq],
          ["serverCpu16", r.cpu16],
          ["serverCpu64", r.cpu64],
        ] as const
      ).map(([g, x]) => ({
        name: name(g),
        ratio: x,
        goal: "≤ 1.3× FLOOR-HTTP (issue 46)",
        ok: x <= 1.3,
        informational,
      })),
      ...(onServer
        ? [
            { name: name("pgCpuSeq"), ratio: r.pgSeq, goal: "≤ 1.3× FLOOR-HTTP (issue 46)", ok: r.pgSeq <= 1.3 },
            ...(Number.isFinite(r.wal)
              ? [{ name: name("wal46"), ratio: r.wal, goal: "≤ 1.5× FLOOR-HTTP (issue 46)", ok: r.wal <= 1.5 }]
              : []),
          ]
        : []),
      ...(
        [
          ["throughput16at46", r.t16],
          ["throughput64at46", r.t64],
        ] as const
      ).map(([g, x]) => ({
        name: name(g),
        ratio: x,
        goal: "≥ 0.7× FLOOR-HTTP (issue 46)",
        ok: x >= 0.7,
        informational,
      })),
    ];
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await scratch?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
