import { loadavg } from "node:os";
import type { Backend } from "./backends";
import { startFloorHttp } from "./floor-http";
import type { Goal } from "./goals";
import { HttpClient } from "./http";
import { loopbackLlm, startLoopbackModel, type Pacing } from "./model";
import { perTurn } from "./sql-count";
import { bytes, lanes, ms, perSec, ratio, summarize } from "./stats";
import { checkedTurn, floorHttpTarget, startBenchServer, turnScript, type Target } from "./targets";
import { describeCost, measureCost, type Cost } from "./turn";

/**
 * turn vs FLOOR-HTTP (issue 19): the engine's clinic turn and the least an HTTP + SSE turn needs
 * (bench/floor-http.ts), both calling the same loopback scripted model server over real sockets,
 * both behind the same load client and postgres.js pool (10 connections) on the same database.
 * Sequential p50 / time to first token, throughput at 16 and 64 conversations in flight (windows
 * alternate), Node CPU per turn, and per-turn statements / commits / WAL. The goals of the issue
 * are stated against this floor; the database-only floor (bench/turn.ts) stays as a reference.
 */
export interface TurnHttpOptions {
  quick: boolean;
  log: (line: string) => void;
  /** How the loopback model writes its streams (bench/model.ts); `none` before issue 46. */
  pacing?: Pacing;
}

const load = () => loadavg()[0]!.toFixed(1);
const userText = (i: number) =>
  `Здравствуйте, вопрос ${i}: сколько стоит первичный приём и нужно ли что-то взять с собой?`;

/** One turn's wall time and time to its first `token` event. */
async function timedTurn(t: Target, id: string, text: string): Promise<{ total: number; ttft: number }> {
  const t0 = performance.now();
  let ttft = Number.NaN;
  await checkedTurn(t, id, text, (e) => {
    if (e.event === "token" && Number.isNaN(ttft)) ttft = performance.now() - t0;
  });
  return { total: performance.now() - t0, ttft };
}

export async function benchTurnHttp(backend: Backend, o: TurnHttpOptions): Promise<Goal[]> {
  const { log } = o;
  const rounds = o.quick ? 2 : 3;
  const seqPerRound = o.quick ? 30 : 80;
  const windowMs = o.quick ? 1500 : 6000;
  const windows = o.quick ? 1 : 3;
  const costTurns = o.quick ? 20 : 100;
  const model = await startLoopbackModel(turnScript, o.pacing ?? "none");
  const engine = await startBenchServer(backend.db, loopbackLlm(model.baseURL));
  const floorServer = await startFloorHttp(backend.db.sql, model.baseURL);
  const floorClient = new HttpClient(floorServer.url);
  const targets: Record<"floor" | "engine", Target> = { floor: floorHttpTarget(floorClient), engine: engine.target };
  const kinds = ["floor", "engine"] as const;
  try {
    log(
      `turn vs FLOOR-HTTP, one process — ${backend.name}: ${engine.target.name} turns, both with a loopback HTTP model server (router + streamed branch, ${o.pacing === "tick" ? "chunks one event-loop turn apart" : "each reply in one write"}) in this process; load average ${load()}`,
    );
    for (const k of kinds) {
      const id = await targets[k].create();
      for (let i = 0; i < (o.quick ? 15 : 40); i++) await checkedTurn(targets[k], id, userText(i));
    }

    const cost: Partial<Record<(typeof kinds)[number], Cost>> = {};
    for (const k of kinds) {
      const id = await targets[k].create();
      // WAL and commits always (about a second of waiting per window, even in --quick): the WAL goal needs them.
      cost[k] = await measureCost(backend, costTurns, (i) => checkedTurn(targets[k], id, userText(i)), true);
    }

    const seq = {
      floor: { total: [] as number[], ttft: [] as number[] },
      engine: { total: [] as number[], ttft: [] as number[] },
    };
    const seqLoad: string[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const k of r % 2 === 0 ? kinds : ([...kinds].reverse() as (typeof kinds)[number][])) {
        const id = await targets[k].create();
        for (let i = 0; i < seqPerRound; i++) {
          const t = await timedTurn(targets[k], id, userText(i));
          seq[k].total.push(t.total);
          seq[k].ttft.push(t.ttft);
        }
      }
      seqLoad.push(load());
    }

    const tput: Record<string, Record<number, number>> = { floor: {}, engine: {} };
    const cpu: Record<string, Record<number, number>> = { floor: {}, engine: {} };
    const tputLoad: Record<number, string[]> = {};
    for (const n of [16, 64]) {
      const ids = Object.fromEntries(
        await Promise.all(
          kinds.map(async (k) => [k, await Promise.all(Array.from({ length: n }, () => targets[k].create()))] as const),
        ),
      ) as Record<string, string[]>;
      const sums = new Map<string, { turns: number; ms: number; cpu: number }>();
      tputLoad[n] = [];
      for (let w = 0; w < windows; w++) {
        for (const k of w % 2 === 0 ? kinds : ([...kinds].reverse() as (typeof kinds)[number][])) {
          let i = 0;
          const c0 = process.cpuUsage();
          const r = await lanes(n, windowMs / windows, (l) => checkedTurn(targets[k], ids[k]![l]!, userText(i++)));
          const c = process.cpuUsage(c0);
          if (r.errors) log(`  ${k} at ${n} in flight: ${r.errors} turn(s) failed`);
          const s = sums.get(k) ?? { turns: 0, ms: 0, cpu: 0 };
          sums.set(k, {
            turns: s.turns + r.latencies.length,
            ms: s.ms + r.elapsedMs,
            cpu: s.cpu + (c.user + c.system) / 1000,
          });
        }
        tputLoad[n]!.push(load());
      }
      for (const [k, v] of sums) {
        tput[k]![n] = v.turns / (v.ms / 1000);
        cpu[k]![n] = v.cpu / v.turns;
      }
    }

    const s = {
      floor: { total: summarize(seq.floor.total), ttft: summarize(seq.floor.ttft) },
      engine: { total: summarize(seq.engine.total), ttft: summarize(seq.engine.ttft) },
    };
    const durable = (c: Cost) => (c.counts.writingCommits - c.counts.asyncCommits) / c.turns;
    const pad = (x: string, n = 11) => x.padStart(n);
    log(
      `  ${"".padEnd(12)}${pad("seq p50")}${pad("seq p99")}${pad("TTFT p50")}${pad("@16")}${pad("@64")}${pad("CPU/turn16")}${pad("CPU/turn64")}${pad("stmts")}${pad("durable")}${pad("WAL/turn")}`,
    );
    for (const k of kinds) {
      const c = cost[k]!;
      log(
        `  ${(k === "floor" ? "FLOOR-HTTP" : "ENGINE").padEnd(12)}${pad(ms(s[k].total.p50))}${pad(ms(s[k].total.p99))}${pad(ms(s[k].ttft.p50))}${pad(perSec(tput[k]![16]!))}${pad(perSec(tput[k]![64]!))}` +
          `${pad(ms(cpu[k]![16]!))}${pad(ms(cpu[k]![64]!))}${pad(perTurn(c.counts, c.turns).statements.toFixed(1))}${pad(durable(c).toFixed(2))}${pad(c.walMine === null ? "n/a" : bytes(c.walMine))}`,
      );
    }
    const r = {
      p50: s.engine.total.p50 / s.floor.total.p50,
      ttft: s.engine.ttft.p50 / s.floor.ttft.p50,
      t16: tput.engine![16]! / tput.floor![16]!,
      t64: tput.engine![64]! / tput.floor![64]!,
      cpu16: cpu.engine![16]! / cpu.floor![16]!,
      cpu64: cpu.engine![64]! / cpu.floor![64]!,
      wal:
        cost.engine!.walMine !== null && cost.floor!.walMine ? cost.engine!.walMine / cost.floor!.walMine : Number.NaN,
      walCluster:
        cost.engine!.walBytes !== null && cost.floor!.walBytes
          ? cost.engine!.walBytes / cost.floor!.walBytes
          : Number.NaN,
    };
    log(
      `  ${"ENGINE ÷ FLOOR".padEnd(12)}${pad(ratio(r.p50))}${pad(ratio(s.engine.total.p99 / s.floor.total.p99))}${pad(ratio(r.ttft))}${pad(ratio(r.t16))}${pad(ratio(r.t64))}${pad(ratio(r.cpu16))}${pad(ratio(r.cpu64))}${pad(ratio(perTurn(cost.engine!.counts, costTurns).statements / perTurn(cost.floor!.counts, costTurns).statements))}${pad("")}${pad(ratio(r.wal))}`,
    );
    log(
      `  engine throughput 64 ÷ 16 in flight: ${ratio(tput.engine![64]! / tput.engine![16]!)} (floor ${ratio(tput.floor![64]! / tput.floor![16]!)})`,
    );
    log(
      `  load average (1 min): sequential rounds ${seqLoad.join(", ")}; windows @16 ${tputLoad[16]!.join(", ")}; @64 ${tputLoad[64]!.join(", ")}`,
    );
    log(
      `  CPU is this Node process's (server, load client and model server share it), so the ratio understates the servers' own difference; WAL is this database's (pg_walinspect), cluster-wide ratio ${ratio(r.walCluster)}`,
    );
    log(`  per turn (${costTurns} sequential turns):`);
    log(describeCost("floor", cost.floor!));
    log(describeCost("engine", cost.engine!));

    const onServer = backend.name === "postgres";
    // The guards are judged on the separate-process measurement (bench/turn-procs.ts); these are its in-process twins.
    const name = (g: string) => `turn.${backend.name}.inProcess.${g}`;
    // Issue 33 restated issue 19's targets as guards, floors not to fall below (doc/bench.md): throughput
    // ≥ 0.5× at 16 and 64 with no drop, sequential p99 ≤ 1.5×, WAL ≤ 3×, one durable commit. The
    // old targets (p50 and first token ≤ 1.2×, throughput ≥ 0.8×, CPU ≤ 1.25×) are printed as references.
    const seqP99 = s.engine.total.p99 / s.floor.total.p99;
    return [
      { name: name("seqP99"), ratio: seqP99, goal: "≤ 1.5× FLOOR-HTTP", ok: seqP99 <= 1.5, informational: !onServer },
      {
        name: name("throughput16"),
        ratio: r.t16,
        goal: "≥ 0.5× FLOOR-HTTP",
        ok: r.t16 >= 0.5,
        informational: !onServer,
      },
      {
        name: name("throughput64"),
        ratio: r.t64,
        goal: "≥ 0.5× FLOOR-HTTP",
        ok: r.t64 >= 0.5,
        informational: !onServer,
      },
      // "No drop from 16 to 64": the engine keeps its share of the floor as the load quadruples (5 % noise allowed).
      {
        name: name("throughput64vs16"),
        ratio: r.t64 / r.t16,
        goal: "≥ 0.95 (ratio @64 ÷ ratio @16)",
        ok: r.t64 / r.t16 >= 0.95,
        informational: !onServer,
      },
      ...(Number.isFinite(r.wal)
        ? [{ name: name("wal"), ratio: r.wal, goal: "≤ 3× FLOOR-HTTP", ok: r.wal <= 3, informational: !onServer }]
        : []),
      {
        name: name("commits"),
        ratio: durable(cost.engine!),
        goal: "1 durable commit per turn",
        ok: durable(cost.engine!) <= 1.0001,
        informational: !onServer,
      },
      { name: name("p50"), ratio: r.p50, goal: "≤ 1.2× FLOOR-HTTP", ok: r.p50 <= 1.2, reference: true },
      { name: name("ttft"), ratio: r.ttft, goal: "≤ 1.2× FLOOR-HTTP", ok: r.ttft <= 1.2, reference: true },
      { name: name("cpu16"), ratio: r.cpu16, goal: "≤ 1.25× FLOOR-HTTP", ok: r.cpu16 <= 1.25, reference: true },
    ];
  } finally {
    floorClient.close();
    await floorServer.close();
    await engine.close();
    await model.close();
  }
}
