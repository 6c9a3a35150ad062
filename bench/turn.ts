import type { Backend } from "./backends";
import { lsnDiff } from "./backends";
import { createFloorTables, floorTurn, type FloorLane } from "./floor";
import type { Goal } from "./goals";
import { directLlm, instantLlm, loopbackLlm, startLoopbackModel } from "./model";
import { perTurn, SqlCounter, type SqlCounts } from "./sql-count";
import { bytes, lanes, ms, perSec, ratio, summarize } from "./stats";
import { checkedTurn, REPLY, startBenchServer, testTarget, turnScript, type BenchServer } from "./targets";

/**
 * turn: full HTTP + SSE turns with an instant scripted model against the floor of one bare
 * transaction per turn, both through the same postgres.js client on the same database.
 */
export interface TurnBenchOptions {
  quick: boolean;
  log: (line: string) => void;
}

export interface Cost {
  counts: SqlCounts;
  turns: number;
  xactCommit: number | null;
  walBytes: number | null;
  walMine: number | null;
  walCommits: number | null;
}

const userText = (i: number) =>
  `Здравствуйте, вопрос ${i}: сколько стоит первичный приём и нужно ли что-то взять с собой?`;

async function sequential(n: number, fn: (i: number) => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

export async function measureCost(
  backend: Backend,
  turns: number,
  fn: (i: number) => Promise<void>,
  serverCounters: boolean,
): Promise<Cost> {
  const sql = backend.db.sql;
  const counter = new SqlCounter();
  // pg_stat_database and WAL need the backends to publish their counters (about a second of
  // waiting per window): full runs only.
  const before = serverCounters ? await backend.counters() : null;
  counter.attach(sql);
  try {
    for (let i = 0; i < turns; i++) await fn(i);
  } finally {
    counter.detach(sql);
  }
  const after = serverCounters ? await backend.counters() : null;
  const wal = before && after ? await backend.wal(before.lsn, after.lsn) : null;
  return {
    counts: counter.snapshot(),
    turns,
    xactCommit: before && after ? (after.xactCommit - before.xactCommit - after.overhead) / turns : null,
    walBytes: before && after ? lsnDiff(before.lsn, after.lsn) / turns : null,
    walMine: wal ? wal.bytes / turns : null,
    walCommits: wal ? wal.commitRecords / turns : null,
  };
}

export function describeCost(label: string, c: Cost): string {
  const p = perTurn(c.counts, c.turns);
  const f = (x: number | null, d = 1) => (x === null ? "n/a" : x.toFixed(d));
  return (
    `  ${label.padEnd(8)} statements ${f(p.statements)} (autocommit reads ${f(p.autocommitReads)}, autocommit writes ${f(p.autocommitWrites)}), ` +
    `transactions ${f(p.transactions)}, writing commits ${f(p.writingCommits)} (durable ${f(p.writingCommits - p.asyncCommits)}, async ${f(p.asyncCommits)}); ` +
    `pg_stat_database xact_commit ${f(c.xactCommit)}, WAL commit records ${f(c.walCommits)}, WAL ${c.walMine === null ? "n/a" : bytes(c.walMine)} (cluster-wide ${c.walBytes === null ? "n/a" : bytes(c.walBytes)})`
  );
}

export async function benchTurn(backend: Backend, o: TurnBenchOptions): Promise<Goal[]> {
  const { log } = o;
  const t0 = performance.now();
  const progress = (what: string) =>
    process.env.BENCH_VERBOSE && console.error(`  [${((performance.now() - t0) / 1000).toFixed(1)} s] ${what}`);
  const sql = backend.db.sql;
  const seqPerRound = o.quick ? 30 : 100;
  const rounds = o.quick ? 2 : 4;
  const windowMs = o.quick ? 700 : 3000;
  const costTurns = o.quick ? 20 : 100;
  await createFloorTables(sql);
  const loop = await startLoopbackModel(turnScript);
  const servers: Record<"instant" | "direct" | "loopback", BenchServer> = {
    instant: await startBenchServer(backend.db, instantLlm(turnScript)),
    direct: await startBenchServer(backend.db, directLlm(turnScript)),
    loopback: await startBenchServer(backend.db, loopbackLlm(loop.baseURL)),
  };
  const target = servers.instant.target;
  // The engine's own path without a feature on top: the foundation's test dialogue, same server.
  const generic = target.name === "clinic" ? testTarget(servers.instant.client) : null;
  let lanesMade = 0;
  const floorLane = (): FloorLane => ({ conversationId: `floor-${++lanesMade}`, seq: 0 });
  const goals: Goal[] = [];
  try {
    log(
      `turn — ${backend.name}: ${target.name === "clinic" ? "clinic turns (POST /v1/clinic/threads/{id}/messages: router + streamed branch)" : "test dialogue turns (POST /v1/test/conversations/{id}/messages: streamed answer)"}, ${REPLY.split(" ").length} streamed tokens per reply`,
    );

    // Warm-up: JIT, prepared statements, pool connections.
    const warmConv = await target.create();
    const warmFloor = floorLane();
    for (let i = 0; i < (o.quick ? 15 : 50); i++) {
      await checkedTurn(target, warmConv, userText(i));
      await floorTurn(sql, warmFloor, userText(i), REPLY);
    }
    for (const t of [servers.direct.target, servers.loopback.target, ...(generic ? [generic] : [])]) {
      const c = await t.create();
      for (let i = 0; i < 10; i++) await checkedTurn(t, c, userText(i));
    }

    progress("warm-up done");
    // What a turn costs the database.
    const costConv = await target.create();
    const engineCost = await measureCost(
      backend,
      costTurns,
      (i) => checkedTurn(target, costConv, userText(i)),
      !o.quick,
    );
    const costLane = floorLane();
    const floorCost = await measureCost(
      backend,
      costTurns,
      (i) => floorTurn(sql, costLane, userText(i), REPLY),
      !o.quick,
    );
    const genericConv = generic ? await generic.create() : null;
    const genericCost = generic
      ? await measureCost(backend, costTurns, (i) => checkedTurn(generic, genericConv!, userText(i)), !o.quick)
      : null;

    progress("cost measured");
    // Sequential latency, floor and engine interleaved by rounds so drift hits both.
    const lat: Record<"floor" | "instant" | "direct" | "loopback" | "generic", number[]> = {
      floor: [],
      instant: [],
      direct: [],
      loopback: [],
      generic: [],
    };
    const targetOf = (k: "instant" | "direct" | "loopback" | "generic") =>
      k === "generic" ? generic! : servers[k].target;
    for (let r = 0; r < rounds; r++) {
      const lane = floorLane();
      lat.floor.push(...(await sequential(seqPerRound, (i) => floorTurn(sql, lane, userText(i), REPLY))));
      for (const k of ["instant", "direct", "loopback", ...(generic ? (["generic"] as const) : [])] as const) {
        const t = targetOf(k);
        const id = await t.create();
        lat[k].push(...(await sequential(seqPerRound, (i) => checkedTurn(t, id, userText(i)))));
      }
    }
    const seq = Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, summarize(v)])) as Record<
      keyof typeof lat,
      ReturnType<typeof summarize>
    >;

    progress("sequential done");
    // Throughput with N conversations in flight, each sending its next message when the last
    // turn ended. Floor and engine windows alternate (rounds), so a change in the machine's load
    // falls on both; each figure is turns over the time of all its windows.
    const tput: Record<string, Record<number, number>> = {
      floor: {},
      instant: {},
      direct: {},
      loopback: {},
      generic: {},
    };
    const cpuPerTurn: Record<string, Record<number, number>> = {
      floor: {},
      instant: {},
      direct: {},
      loopback: {},
      generic: {},
    };
    const windows = o.quick ? 1 : 3;
    for (const n of [16, 64]) {
      const floorLanes = Array.from({ length: n }, floorLane);
      // --quick measures the side variants sequentially only.
      const kinds =
        n === 16 && !o.quick
          ? (["instant", "direct", "loopback", ...(generic ? (["generic"] as const) : [])] as const)
          : (["instant"] as const);
      const ids = new Map<string, string[]>();
      for (const k of kinds) ids.set(k, await Promise.all(Array.from({ length: n }, () => targetOf(k).create())));
      const sums = new Map<string, { turns: number; ms: number; cpu: number }>();
      // Node's own CPU time per turn (server and load client share this process): what bounds throughput here.
      const add = async (k: string, run: () => ReturnType<typeof lanes>) => {
        const c0 = process.cpuUsage();
        const r = await run();
        const c = process.cpuUsage(c0);
        const s = sums.get(k) ?? { turns: 0, ms: 0, cpu: 0 };
        sums.set(k, {
          turns: s.turns + r.latencies.length,
          ms: s.ms + r.elapsedMs,
          cpu: s.cpu + (c.user + c.system) / 1000,
        });
        return r;
      };
      for (let w = 0; w < windows; w++) {
        await add("floor", () =>
          lanes(n, windowMs / windows, (l) => floorTurn(sql, floorLanes[l]!, userText(l), REPLY)),
        );
        for (const k of kinds) {
          let i = 0;
          const e = await add(k, () =>
            lanes(n, windowMs / windows, (l) => checkedTurn(targetOf(k), ids.get(k)![l]!, userText(i++))),
          );
          if (e.errors) log(`  ${k} at ${n} concurrent: ${e.errors} turn(s) failed`);
        }
      }
      for (const [k, v] of sums) {
        tput[k]![n] = v.turns / (v.ms / 1000);
        cpuPerTurn[k]![n] = v.cpu / v.turns;
      }
    }

    const row = (label: string, s: { p50: number; p99: number }, t16: number | undefined, t64: number | undefined) =>
      `  ${label.padEnd(44)} ${ms(s.p50).padStart(9)} ${ms(s.p99).padStart(9)} ${(t16 === undefined ? "" : perSec(t16)).padStart(10)} ${(t64 === undefined ? "" : perSec(t64)).padStart(10)}`;
    log(
      `  ${"".padEnd(44)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"16 conc".padStart(10)} ${"64 conc".padStart(10)}`,
    );
    log(row("floor: BEGIN, 2 messages, upsert state, COMMIT", seq.floor, tput.floor![16], tput.floor![64]));
    log(row("engine, instant model (openai client, no socket)", seq.instant, tput.instant![16], tput.instant![64]));
    log(row("engine, direct model (no client)", seq.direct, tput.direct![16], undefined));
    log(row("engine, loopback HTTP model server", seq.loopback, tput.loopback![16], undefined));
    if (generic) log(row("generic driver turn (test dialogue), instant", seq.generic, tput.generic![16], undefined));
    const p50Ratio = seq.instant.p50 / seq.floor.p50;
    const t16Ratio = tput.instant![16]! / tput.floor![16]!;
    const t64Ratio = tput.instant![64]! / tput.floor![64]!;
    log(
      `  ratios vs floor: p50 ${ratio(p50Ratio)}, p99 ${ratio(seq.instant.p99 / seq.floor.p99)}, throughput 16 conc ${ratio(t16Ratio)}, 64 conc ${ratio(t64Ratio)}`,
    );
    log(
      `  Node CPU per turn at 16 concurrent (server + load client, one process): ${Object.entries(cpuPerTurn)
        .filter(([, v]) => v[16] !== undefined)
        .map(([k, v]) => `${k} ${ms(v[16]!)}`)
        .join(", ")}`,
    );
    log(
      `  model client's share of a sequential turn (p50): openai client in-process ${ms(seq.instant.p50 - seq.direct.p50)}, + loopback HTTP ${ms(seq.loopback.p50 - seq.instant.p50)}`,
    );
    log(`  per turn (${costTurns} sequential turns):`);
    log(describeCost("floor", floorCost));
    log(describeCost("engine", engineCost));
    if (genericCost) log(describeCost("generic", genericCost));

    const durable = (c: Cost) => (c.counts.writingCommits - c.counts.asyncCommits) / c.turns;
    const onServer = backend.name === "postgres";
    goals.push(
      // The database-only floor is a second reference since issue 19; the turn goals are against FLOOR-HTTP (bench/turn-http.ts).
      {
        name: `turn.${backend.name}.vsDbFloor.p50`,
        ratio: p50Ratio,
        goal: "≤ 2.5× floor",
        ok: p50Ratio <= 2.5,
        reference: true,
      },
      {
        name: `turn.${backend.name}.vsDbFloor.throughput16`,
        ratio: t16Ratio,
        goal: "≥ 0.5× floor",
        ok: t16Ratio >= 0.5,
        reference: true,
      },
      {
        name: `turn.${backend.name}.vsDbFloor.throughput64`,
        ratio: t64Ratio,
        goal: "≥ 0.5× floor",
        ok: t64Ratio >= 0.5,
        reference: true,
      },
      {
        name: `turn.${backend.name}.commits`,
        ratio: durable(engineCost) / durable(floorCost),
        goal: "1 durable commit per turn (floor: 1)",
        ok: durable(engineCost) <= 1.0001,
        informational: !onServer,
      },
    );
    return goals;
  } finally {
    for (const s of Object.values(servers)) await s.close();
    await loop.close();
  }
}
