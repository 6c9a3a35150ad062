import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { openScratchDatabase } from "./backends";
import { HttpClient } from "./http";
import { quietServerEnv, startLoopbackModel } from "./model";
import { startHaproxy, type Haproxy } from "../scripts/haproxy";
import { cpuOf, freePort, spawnProc, type Proc } from "./procs";
import { lanes, ms, perSec, ratio, summarize } from "./stats";
import { checkedTurn, clinicTarget, turnScript, type Target } from "./targets";

/**
 * Scale-out (issues 19, 33): N server processes (`node --import tsx main.ts`, what `npm start`
 * runs) on one PostgreSQL database, behind HAProxy (scripts/haproxy.ts: affinity by conversation
 * id), driven by the load client of bench/turn-http.ts (clinic turns: router call + streamed
 * branch call to a loopback scripted model server in this process). Throughput at 16 and 64
 * conversations in flight for N = 1 without the balancer, and N = 1, 2, 3 through it; latency per
 * turn (p50, p99); CPU per turn of the servers, HAProxy and this process (load client + model
 * server), read from /proc. Configurations alternate over rounds so a change of the machine's
 * load spreads over all of them.
 *
 * `--latency`: only N = 1 direct and N = 1 through HAProxy, the same turns at 1 and 8 in flight,
 * 4 rounds: what the balancer adds to a turn (p50, p99) and its CPU per turn.
 *
 * `npx tsx bench/scale-out.ts [--quick] [--latency] [--max=3]` (BENCH_DATABASE_URL / DATABASE_URL,
 * else the local server; HAPROXY_BIN). Every process shares this machine's cores: the table shows
 * what N buys on it, not on N machines.
 */
const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const latencyMode = argv.includes("--latency");
const maxN = latencyMode ? 1 : Number(argv.find((a) => a.startsWith("--max="))?.slice(6) ?? 3);
const loads = latencyMode ? [1, 8] : [16, 64];
const windowMs = quick ? 2_500 : latencyMode ? 4_000 : 6_000;
const rounds = latencyMode ? (quick ? 2 : 4) : quick ? 1 : 2;
const load = () => loadavg()[0]!.toFixed(1);
const text = (i: number) => `Здравствуйте, вопрос ${i}: сколько стоит первичный приём и нужно ли что-то взять с собой?`;

interface Config {
  name: string;
  servers: Proc[];
  proxy: Haproxy | null;
  client: HttpClient;
  target: Target;
  ids: Record<number, string[]>;
  sums: Record<number, { turns: number; ms: number; server: number; proxy: number; self: number; errors: number }>;
  latencies: Record<number, number[]>;
  loads: Record<number, string[]>;
}

async function main() {
  const scratch = await openScratchDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), "bench-scale-out-"));
  const model = await startLoopbackModel(turnScript);
  const env: Record<string, string> = {
    DATABASE_URL: scratch.url,
    DATA_DIR: dataDir,
    ...quietServerEnv(model.baseURL),
  };
  const servers: Proc[] = [];
  const proxies: Haproxy[] = [];
  const configs: Config[] = [];
  const log = (l: string) => console.log(l);
  try {
    log(
      `scale-out: clinic turns (loopback scripted model), N server processes on one PostgreSQL database; ${cpus().length} cores; load average ${load()}`,
    );
    // One at a time: the first applies the migrations (under an advisory lock), each is healthy before the next.
    servers.push(await spawnProc(["--import", "tsx", "main.ts"], env, "/healthz"));
    for (let i = 1; i < maxN; i++) servers.push(await spawnProc(["--import", "tsx", "main.ts"], env, "/healthz"));
    const make = async (label: string, n: number, viaProxy: boolean): Promise<Config> => {
      const upstreams = servers.slice(0, n);
      const proxy = viaProxy
        ? await startHaproxy({ upstreams: upstreams.map((s) => s.url), port: await freePort() })
        : null;
      if (proxy) proxies.push(proxy);
      const client = new HttpClient(proxy?.url ?? upstreams[0]!.url);
      return {
        name: label,
        servers: upstreams,
        proxy,
        client,
        target: clinicTarget(client),
        ids: {},
        sums: {},
        latencies: {},
        loads: {},
      };
    };
    configs.push(await make("N=1 direct", 1, false));
    for (let n = 1; n <= maxN; n++) configs.push(await make(`N=${n} via HAProxy`, n, true));
    const proxyCpu = (c: Config) => (c.proxy ? cpuOf(c.proxy.child.pid!) : 0);

    for (const c of configs)
      for (const n of loads) {
        c.ids[n] = await Promise.all(Array.from({ length: n }, () => c.target.create()));
        // Warm every process the config reaches (JIT, registry caches, pool connections).
        await Promise.all(c.ids[n]!.map((id, i) => checkedTurn(c.target, id, text(i))));
      }

    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? configs : [...configs].reverse();
      for (const c of order)
        for (const n of loads) {
          const s0 = c.servers.reduce((a, s) => a + s.cpuMs(), 0);
          const p0 = proxyCpu(c);
          const m0 = process.cpuUsage();
          let i = 0;
          const res = await lanes(n, windowMs, (l) => checkedTurn(c.target, c.ids[n]![l]!, text(i++)));
          const m = process.cpuUsage(m0);
          const sum = (c.sums[n] ??= { turns: 0, ms: 0, server: 0, proxy: 0, self: 0, errors: 0 });
          sum.turns += res.latencies.length;
          sum.ms += res.elapsedMs;
          sum.errors += res.errors;
          sum.server += c.servers.reduce((a, s) => a + s.cpuMs(), 0) - s0;
          sum.proxy += proxyCpu(c) - p0;
          (c.latencies[n] ??= []).push(...res.latencies);
          sum.self += (m.user + m.system) / 1000;
          (c.loads[n] ??= []).push(load());
        }
    }

    const pad = (x: string, w = 12) => x.padStart(w);
    const [lo, hi] = loads as [number, number];
    const at = (label: string) => `${label} @${lo}` + " | " + `@${hi}`;
    log(
      `  ${"".padEnd(18)}${pad(`@${lo}`)}${pad(`@${hi}`)}${pad(`× N=1 @${lo}`)}${pad(`× N=1 @${hi}`)}${pad(at("p50"), 22)}${pad(at("p99"), 22)}` +
        `${pad("srv CPU/t")}${pad("LB CPU/t")}${pad("client CPU/t")}  load avg @${lo} | @${hi}`,
    );
    const base = configs[0]!;
    const tput = (c: Config, n: number) => c.sums[n]!.turns / (c.sums[n]!.ms / 1000);
    const lat = (c: Config, n: number) => summarize(c.latencies[n] ?? []);
    for (const c of configs) {
      const [a, b] = [c.sums[lo]!, c.sums[hi]!];
      const per = (k: "server" | "proxy" | "self") => (a[k] + b[k]) / (a.turns + b.turns);
      const errors = a.errors + b.errors;
      log(
        `  ${c.name.padEnd(18)}${pad(perSec(tput(c, lo)))}${pad(perSec(tput(c, hi)))}${pad(ratio(tput(c, lo) / tput(base, lo)))}${pad(ratio(tput(c, hi) / tput(base, hi)))}` +
          `${pad(`${ms(lat(c, lo).p50)} | ${ms(lat(c, hi).p50)}`, 22)}${pad(`${ms(lat(c, lo).p99)} | ${ms(lat(c, hi).p99)}`, 22)}` +
          `${pad(ms(per("server")))}${pad(c.proxy ? ms(per("proxy")) : "—")}${pad(ms(per("self")))}  ${c.loads[lo]!.join(", ")} | ${c.loads[hi]!.join(", ")}${errors ? `  (${errors} failed turns)` : ""}`,
      );
    }
    // The hop alone (below saturation, where a difference of latency is the hop's, not queueing
    // noise): the same single process, directly and through HAProxy.
    const via = configs[1]!;
    for (const n of latencyMode ? loads : []) {
      const [d, h] = [lat(base, n), lat(via, n)];
      log(
        `  HAProxy adds @${n}: p50 ${ms(h.p50 - d.p50)}, p99 ${ms(h.p99 - d.p99)} per turn (${ms(d.p50)} → ${ms(h.p50)}, ${ms(d.p99)} → ${ms(h.p99)}; ${d.n} | ${h.n} turns); ` +
          `its CPU ${ms(via.sums[n]!.proxy / via.sums[n]!.turns)} per turn`,
      );
    }
    log(
      `  windows of ${windowMs / 1000} s × ${rounds} round(s) per cell; latency = one whole turn (POST to the stream's end); CPU per turn (/proc utime+stime, 10 ms ticks); every process shares the same ${cpus().length} cores`,
    );
  } finally {
    for (const c of configs) c.client.close();
    await Promise.all([...proxies.map((p) => p.close()), ...servers.map((p) => p.stop())]);
    await model.close();
    await scratch.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
