import { loadavg } from "node:os";
import { adminConnection, benchServerUrl } from "./backends";
import { runOnLoopbackEngine, type LoopbackEngine } from "./loopback-engine";
import { SqlCounter, perTurn } from "./sql-count";
import { lanes, ms, perSec, summarize } from "./stats";
import { checkedTurn } from "./targets";

/**
 * `npx tsx bench/contention.ts [seconds] [concs]` — what changes in the engine's clinic turn between
 * 16 and 64 conversations in flight (issue 19): throughput, latency, statements and transactions
 * per turn, and what the database sessions wait on (pg_stat_activity sampled every 10 ms from a
 * side connection: lock waits between the background flush and the turns' commits, WAL flush,
 * client reads = the pool waiting on Node). Windows alternate 16 / 64 so load drift hits both.
 */
const seconds = Number(process.argv[2] ?? 4);
const concs = (process.argv[3] ?? "16,64").split(",").map(Number);

async function main({ backend, engine }: LoopbackEngine): Promise<void> {
  const side = adminConnection(benchServerUrl());
  const [{ db }] = (await backend.db.sql<{ db: string }[]>`select current_database() as db`) as unknown as [
    { db: string },
  ];
  try {
    const warm = await engine.target.create();
    for (let i = 0; i < 20; i++) await checkedTurn(engine.target, warm, `разогрев ${i}`);
    const ids = new Map<number, string[]>();
    for (const n of concs) ids.set(n, await Promise.all(Array.from({ length: n }, () => engine.target.create())));
    const res = new Map<
      number,
      {
        turns: number;
        ms: number;
        lat: number[];
        waits: Map<string, number>;
        samples: number;
        active: number;
        counter: SqlCounter;
      }
    >();
    for (const n of concs)
      res.set(n, { turns: 0, ms: 0, lat: [], waits: new Map(), samples: 0, active: 0, counter: new SqlCounter() });
    for (let round = 0; round < 2; round++) {
      for (const n of round % 2 ? [...concs].reverse() : concs) {
        const r = res.get(n)!;
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            // A lock wait is keyed by what waits and what holds it up (first words of both statements).
            const rows = await side<{ state: string; w: string | null }[]>`
              select a.state, a.wait_event_type || ':' || a.wait_event ||
                     case when a.wait_event_type = 'Lock' then ' [' || regexp_replace(left(a.query, 60), '[[:space:]]+', ' ', 'g') || '] behind [' ||
                       coalesce((select regexp_replace(left(b.query, 60), '[[:space:]]+', ' ', 'g') from pg_stat_activity b where b.pid = (pg_blocking_pids(a.pid))[1]), '?') || ']' else '' end as w
              from pg_stat_activity a where a.datname = ${db} and a.pid <> pg_backend_pid() and a.backend_type = 'client backend'`;
            r.samples++;
            for (const row of rows) {
              if (row.state === "idle") continue;
              r.active++;
              const key = `${row.state}${row.w ? ` ${row.w}` : " (on CPU)"}`;
              r.waits.set(key, (r.waits.get(key) ?? 0) + 1);
            }
            await new Promise((res) => setTimeout(res, 10));
          }
        })();
        let i = 0;
        r.counter.attach(backend.db.sql);
        const out = await lanes(n, (seconds * 1000) / 2, (l) =>
          checkedTurn(engine.target, ids.get(n)![l]!, `Сколько стоит приём? ${i++}`),
        );
        r.counter.detach(backend.db.sql);
        sampling = false;
        await sampler;
        r.turns += out.latencies.length;
        r.ms += out.elapsedMs;
        r.lat.push(...out.latencies);
      }
    }
    console.log(
      `engine clinic turns, loopback model, ${seconds} s per concurrency (2 alternating windows); load average ${loadavg()[0]!.toFixed(1)}`,
    );
    for (const [n, r] of res) {
      const s = summarize(r.lat);
      const p = perTurn(r.counter.snapshot(), r.turns);
      console.log(
        `\n@${n}: ${perSec(r.turns / (r.ms / 1000))}, latency p50 ${ms(s.p50)} p99 ${ms(s.p99)}; per turn ${p.statements.toFixed(2)} statements, ${p.transactions.toFixed(2)} transactions, ${p.writingCommits.toFixed(2)} writing commits`,
      );
      console.log(
        `  database sessions not idle, mean ${(r.active / r.samples).toFixed(2)} of ${backend.db.sql.options.max}; by state / wait (share of samples):`,
      );
      for (const [k, v] of [...r.waits].sort((a, b) => b[1] - a[1]).slice(0, 10))
        console.log(`    ${k.padEnd(48)} ${(v / r.samples).toFixed(2)}`.replace(/\s+$/, ""));
    }
  } finally {
    await side.end({ timeout: 2 });
  }
}

runOnLoopbackEngine(main);
