import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { HttpClient } from "./http";
import type { Pacing } from "./model";
import { cpuOf, freePort, startChild } from "./procs";
import { aggregate, callerTable, categoryTable, functionTable, type CpuProfile } from "./profile-agg";
import { engineEnv, scratchPostgres, startArgs, startModel, type Scratch } from "./rig";
import { lanes, ms, perSec, sleep } from "./stats";
import { checkedTurn, clinicTarget } from "./targets";

/**
 * `npm run bench:profile` (or `npm run bench -- --profile`): where the engine's CPU per turn goes
 * under a steady load. The engine runs as `npm start` runs it (the build, then node with the start
 * script's arguments) plus `--cpu-prof`, on its own scratch database (or PGlite), behind the same
 * scripted model and load client as the turn benchmark; after a warm-up, `conc` conversations
 * in flight for `seconds`. On SIGTERM the engine writes its profile; the samples of the steady
 * window are grouped by category (bench/profile-agg.ts) and divided by the turns completed in it.
 */
export interface ProfileOptions {
  backend: "postgres" | "pglite";
  conc: number;
  seconds: number;
  pacing: Pacing;
  /** Sampling interval, µs (V8's default 1000). */
  intervalUs: number;
  log: (line: string) => void;
}

const userText = (i: number) =>
  `Здравствуйте, вопрос ${i}: сколько стоит первичный приём и нужно ли что-то взять с собой?`;
/** The monotonic clock in µs: the clock of V8's profile timestamps. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export async function benchProfile(o: ProfileOptions): Promise<void> {
  const { log } = o;
  const tmp = mkdtempSync(join(tmpdir(), "bench-prof-"));
  const profDir = join(tmp, "prof");
  let scratch: Scratch | null = null;
  const stops: (() => Promise<void>)[] = [];
  try {
    scratch = o.backend === "postgres" ? await scratchPostgres() : null;
    const db = scratch ? { url: scratch.url(await scratch.create("prof")) } : { dir: join(tmp, "engine") };
    const model = await startModel(o.pacing);
    stops.push(model.stop);
    // What `npm start` runs: its prestart (the build), then node with the start script's arguments.
    execFileSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });
    const args = startArgs();
    const script = args.findIndex((a) => !a.startsWith("-"));
    const nodeArgs = [
      ...args.slice(0, script),
      "--cpu-prof",
      `--cpu-prof-dir=${profDir}`,
      `--cpu-prof-interval=${o.intervalUs}`,
      ...args.slice(script),
    ];
    const port = await freePort();
    const engine = await startChild(
      process.execPath,
      nodeArgs,
      engineEnv(port, model.url, db),
      /listening on (http:\/\/[\d.]+:\d+)/,
    );
    stops.push(engine.stop);
    const client = new HttpClient(engine.url);
    stops.push(async () => client.close());
    const target = clinicTarget(client);
    log(
      `profile — ${o.backend}: node ${nodeArgs.join(" ")}; ${o.conc} conversations in flight for ${o.seconds} s after a warm-up; load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}, ${cpus().length} cores`,
    );

    const warm = await target.create();
    for (let i = 0; i < 40; i++) await checkedTurn(target, warm, userText(i));
    const ids = await Promise.all(Array.from({ length: o.conc }, () => target.create()));
    let i = 0;
    let counted = 0;
    let open = false;
    let from = 0;
    let to = 0;
    let c0 = 0;
    let c1 = 0;
    // The main thread's own CPU (the event loop the profile samples), beside the whole process's.
    let m0 = 0;
    let m1 = 0;
    const pid = engine.child.pid!;
    const rampMs = 3000;
    void sleep(rampMs).then(() => {
      from = nowUs();
      c0 = cpuOf(pid);
      m0 = cpuOf(pid, pid);
      open = true;
    });
    void sleep(rampMs + o.seconds * 1000).then(() => {
      to = nowUs();
      c1 = cpuOf(pid);
      m1 = cpuOf(pid, pid);
      open = false;
    });
    const r = await lanes(o.conc, rampMs + o.seconds * 1000, async (l) => {
      await checkedTurn(target, ids[l]!, userText(i++));
      if (open) counted++;
    });
    if (r.errors) log(`  ${r.errors} turn(s) failed`);
    const serverCpu = c1 - c0;
    await engine.stop();
    const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
    if (!file) throw new Error(`the engine wrote no profile in ${profDir}: ${engine.output().slice(-1000)}`);
    // Kept (bench/results/ is not committed) for a flame graph or another grouping: npx tsx bench/profile-agg.ts <file>.
    mkdirSync("bench/results", { recursive: true });
    const kept = join("bench/results", `engine-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`);
    copyFileSync(join(profDir, file), kept);
    const profile = JSON.parse(readFileSync(kept, "utf8")) as CpuProfile;
    const a = aggregate(profile, { fromUs: from, toUs: to }, o.intervalUs);
    const windowS = (to - from) / 1e6;
    log(
      `  ${counted} turns in ${windowS.toFixed(1)} s (${perSec(counted / windowS)}); server CPU per turn (/proc): ${ms(serverCpu / counted)} all threads (share ${(serverCpu / 1000 / windowS).toFixed(2)}), ${ms((m1 - m0) / counted)} main thread; sampled running (each sample ≤ ${o.intervalUs} µs) ${ms(a.busyUs / 1000 / counted)}${a.windowed ? "" : " (window outside the profile's clock: whole profile counted)"}; load average now ${loadavg()[0]!.toFixed(1)}`,
    );
    for (const l of categoryTable(a, counted)) log(l);
    log("  Node's own time (node:*) by the package or project folder that called it:");
    for (const l of callerTable(a, 15, counted)) log(l);
    log("  top functions (self time):");
    for (const l of functionTable(a, 30, counted)) log(l);
    log(`  profile kept in ${kept}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await scratch?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
