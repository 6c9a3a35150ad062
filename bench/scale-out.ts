import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { defaultServerUrl } from "./backends";
import { HttpClient } from "./http";
import { benchRoleModels, startLoopbackModel } from "./model";
import { spawnProc, type Proc } from "./procs";
import { lanes, ms, perSec, ratio } from "./stats";
import { checkedTurn, clinicTarget, turnScript, type Target } from "./targets";

/**
 * Scale-out (issue 19): N server processes (`node --import tsx main.ts`, what `npm start`
 * runs) on one PostgreSQL database, behind scripts/round-robin-proxy.ts (its own process), driven
 * by the load client of bench/turn-http.ts (clinic turns: router call + streamed branch call to a
 * loopback scripted model server in this process). Throughput at 16 and 64 conversations in
 * flight for N = 1 without the proxy, and N = 1, 2, 3 through it; CPU per turn of the servers,
 * the proxy and this process (load client + model server), read from /proc. Configurations
 * alternate over rounds so a change of the machine's load spreads over all of them.
 *
 * `npx tsx bench/scale-out.ts [--quick] [--max=3]` (BENCH_DATABASE_URL / DATABASE_URL, else the
 * local server). Every process shares this machine's cores: the table shows what N buys on it,
 * not on N machines.
 */
const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const maxN = Number(argv.find((a) => a.startsWith("--max="))?.slice(6) ?? 3);
const windowMs = quick ? 2_500 : 6_000;
const rounds = quick ? 1 : 2;
const load = () => loadavg()[0]!.toFixed(1);
const text = (i: number) => `Здравствуйте, вопрос ${i}: сколько стоит первичный приём и нужно ли что-то взять с собой?`;

interface Config {
  name: string;
  servers: Proc[];
  proxy: Proc | null;
  client: HttpClient;
  target: Target;
  ids: Record<number, string[]>;
  sums: Record<number, { turns: number; ms: number; server: number; proxy: number; self: number; errors: number }>;
  loads: Record<number, string[]>;
}

async function main() {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? defaultServerUrl;
  const name = `bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-scale-out-"));
  const model = await startLoopbackModel(turnScript);
  const env: Record<string, string> = {
    DATABASE_URL: dbUrl.toString(),
    DATA_DIR: dataDir,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: "bench",
    LLM_MODEL: "bench-answer",
    API_TOKENS: "",
    RUN_DETACH_GRACE_MS: "0",
    AI_DEBUG: "false",
    LOG_LEVEL: "warn",
  };
  for (const [role, m] of Object.entries(benchRoleModels())) env[`LLM_MODEL_${role.toUpperCase()}`] = m;
  const servers: Proc[] = [];
  const proxies: Proc[] = [];
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
        ? await spawnProc(
            ["--import", "tsx", "scripts/round-robin-proxy.ts", ...upstreams.map((s) => s.url)],
            {},
            "/healthz",
          )
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
        loads: {},
      };
    };
    configs.push(await make("N=1 direct", 1, false));
    for (let n = 1; n <= maxN; n++) configs.push(await make(`N=${n} via proxy`, n, true));

    for (const c of configs)
      for (const n of [16, 64]) {
        c.ids[n] = await Promise.all(Array.from({ length: n }, () => c.target.create()));
        // Warm every process the config reaches (JIT, registry caches, pool connections).
        await Promise.all(c.ids[n]!.map((id, i) => checkedTurn(c.target, id, text(i))));
      }

    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? configs : [...configs].reverse();
      for (const c of order)
        for (const n of [16, 64]) {
          const s0 = c.servers.reduce((a, s) => a + s.cpuMs(), 0);
          const p0 = c.proxy?.cpuMs() ?? 0;
          const m0 = process.cpuUsage();
          let i = 0;
          const res = await lanes(n, windowMs, (l) => checkedTurn(c.target, c.ids[n]![l]!, text(i++)));
          const m = process.cpuUsage(m0);
          const sum = (c.sums[n] ??= { turns: 0, ms: 0, server: 0, proxy: 0, self: 0, errors: 0 });
          sum.turns += res.latencies.length;
          sum.ms += res.elapsedMs;
          sum.errors += res.errors;
          sum.server += c.servers.reduce((a, s) => a + s.cpuMs(), 0) - s0;
          sum.proxy += (c.proxy?.cpuMs() ?? 0) - p0;
          sum.self += (m.user + m.system) / 1000;
          (c.loads[n] ??= []).push(load());
        }
    }

    const pad = (x: string, w = 12) => x.padStart(w);
    log(
      `  ${"".padEnd(16)}${pad("@16")}${pad("@64")}${pad("× N=1 @16")}${pad("× N=1 @64")}${pad("srv CPU/t")}${pad("proxy CPU/t")}${pad("client CPU/t")}  load avg @16 | @64`,
    );
    const base = configs[0]!;
    const tput = (c: Config, n: number) => c.sums[n]!.turns / (c.sums[n]!.ms / 1000);
    for (const c of configs) {
      const s = c.sums[16]!;
      const all = { turns: s.turns + c.sums[64]!.turns };
      const per = (k: "server" | "proxy" | "self") => (s[k] + c.sums[64]![k]) / all.turns;
      const errors = s.errors + c.sums[64]!.errors;
      log(
        `  ${c.name.padEnd(16)}${pad(perSec(tput(c, 16)))}${pad(perSec(tput(c, 64)))}${pad(ratio(tput(c, 16) / tput(base, 16)))}${pad(ratio(tput(c, 64) / tput(base, 64)))}` +
          `${pad(ms(per("server")))}${pad(c.proxy ? ms(per("proxy")) : "—")}${pad(ms(per("self")))}  ${c.loads[16]!.join(", ")} | ${c.loads[64]!.join(", ")}${errors ? `  (${errors} failed turns)` : ""}`,
      );
    }
    log(
      `  windows of ${windowMs / 1000} s × ${rounds} round(s) per cell; CPU per turn over both loads (/proc utime+stime, 10 ms ticks); every process shares the same ${cpus().length} cores`,
    );
  } finally {
    for (const c of configs) c.client.close();
    await Promise.all([...proxies, ...servers].map((p) => p.stop()));
    await model.close();
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end({ timeout: 2 });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
