import { fork, type ChildProcess } from "node:child_process";
import { findSourceMap } from "node:module";
import { Session } from "node:inspector/promises";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { openPglite, openPostgres, type Backend } from "./backends";
import { HttpClient } from "./http";
import { loopbackLlm, type Pacing } from "./model";
import { aggregate, categoryTable, callerTable, functionTable, type CpuProfile } from "./profile-agg";
import { startModel } from "./rig";
import { checkedTurn, clinicTarget, startBenchServer } from "./targets";

/**
 * alloc-turn (issue 46): the bytes a clinic turn allocates on the engine's heap, and who allocates
 * them. The engine runs in this process (bench/targets.ts `startBenchServer`: the real HTTP
 * server, driver, SSE writer, run events and storage, on a scratch PostgreSQL database or an
 * embedded PGlite), the scripted model (bench/model.ts, `turnScript`) and the load client in
 * processes of their own, so that what is sampled here is the engine's work alone — the client's
 * SSE parsing and the model's stream building are not. Around each round of turns V8's sampling
 * heap profiler runs with the objects later collected by GC kept in the profile (so the sum is
 * bytes allocated, not bytes live); the samples are grouped by category and function as the CPU
 * profile is (bench/profile-agg.ts, a sample's bytes standing for its µs). Per round also the
 * process's CPU (user + system) and the time GC took (PerformanceObserver 'gc'), per turn, measured
 * first, on rounds without the profiler (and how much of GC was major). The logger is silent here
 * (`npm start` writes one JSON line per turn); with PGlite the embedded database's JS glue is
 * inside the figures.
 *
 *   node --enable-source-maps --import tsx bench/alloc-turn.ts [--backend postgres|pglite] [--rounds 5] [--turns 400]
 *     [--conc 8] [--warm 1000] [--pacing tick|none] [--interval 4096 (bytes)] [--top 40] [--live]
 */
const HERE = fileURLToPath(import.meta.url);
const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : dflt;
};
const userText = (i: number) =>
  `Здравствуйте, вопрос ${i}: сколько стоит первичный приём и нужно ли что-то взять с собой?`;

/** The load client's process: `threads N` makes N threads, `turns N` runs N turns spread over them. */
async function client(url: string): Promise<void> {
  const target = clinicTarget(new HttpClient(url));
  let ids: string[] = [];
  let next = 0;
  process.on("message", (m: { kind: "threads" | "turns"; n: number }) => {
    void (async () => {
      if (m.kind === "threads") ids = await Promise.all(Array.from({ length: m.n }, () => target.create()));
      else {
        let left = m.n;
        await Promise.all(
          ids.map(async (id) => {
            while (left > 0) {
              left--;
              await checkedTurn(target, id, userText(next++));
            }
          }),
        );
      }
      process.send!("done");
    })().catch((e) => {
      console.error(e);
      process.exit(1);
    });
  });
  process.send!("ready");
}

function ask(c: ChildProcess, m: object): Promise<void> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`client exited ${code}`));
    c.once("exit", onExit);
    c.once("message", () => {
      c.off("exit", onExit);
      resolve();
    });
    c.send(m);
  });
}

interface HeapNode {
  id: number;
  callFrame: CpuProfile["nodes"][number]["callFrame"];
  selfSize: number;
  children: HeapNode[];
}

/**
 * Bytes by the nearest named function of the project's up the stack (itself included): who in the
 * engine's own code asked for them, through whatever package or Node module allocated them.
 */
function byProjectCaller(head: HeapNode): Map<string, number> {
  const out = new Map<string, number>();
  const root = fileURLToPath(new URL("..", import.meta.url));
  const walk = (n: HeapNode, owner: string) => {
    const { url, functionName } = n.callFrame;
    const file = url.startsWith("file://") ? fileURLToPath(url) : url;
    const ours = file.startsWith(root) && !file.includes("node_modules");
    const here = ours && functionName ? `${functionName} (${file.slice(root.length)})` : owner;
    if (n.selfSize > 0) out.set(here, (out.get(here) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c, here);
  };
  walk(head, "(no project function on the stack)");
  return out;
}

/**
 * A project TypeScript file's frame at its source line: tsx compiles each file to one long line,
 * whose source map Node keeps when source maps are on (`--enable-source-maps`).
 */
function sourceLine(cf: HeapNode["callFrame"]): HeapNode["callFrame"] {
  if (!cf.url.startsWith("file://") || !cf.url.endsWith(".ts")) return cf;
  const map = findSourceMap(cf.url);
  const e = (map?.findEntry(cf.lineNumber, cf.columnNumber) ?? {}) as { originalLine?: number };
  return e.originalLine === undefined ? cf : { ...cf, lineNumber: e.originalLine };
}

/** A sampling heap profile as a CPU profile whose one "sample" per node lasts its bytes: profile-agg groups it. */
function asCpuProfile(head: HeapNode): { p: CpuProfile; bytes: number } {
  const nodes: CpuProfile["nodes"] = [];
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let bytes = 0;
  const walk = (n: HeapNode) => {
    nodes.push({ id: n.id, callFrame: sourceLine(n.callFrame), children: n.children.map((c) => c.id) });
    if (n.selfSize > 0) {
      samples.push(n.id);
      timeDeltas.push(n.selfSize);
      bytes += n.selfSize;
    }
    n.children.forEach(walk);
  };
  walk(head);
  return { p: { nodes, samples, timeDeltas, startTime: 0, endTime: bytes }, bytes };
}

async function main(): Promise<void> {
  if (argv[0] === "client") return client(argv[1]!);
  const backendName = arg("backend", "postgres");
  const rounds = Number(arg("rounds", "5"));
  const turns = Number(arg("turns", "400"));
  const conc = Number(arg("conc", "8"));
  const interval = Number(arg("interval", "4096"));
  const top = Number(arg("top", "40"));
  const warm = Number(arg("warm", "1000"));
  // Only what is still reachable when the round ends: who holds memory across turns (promoted, and so paid for by major GCs).
  const live = argv.includes("--live");
  const model = await startModel(arg("pacing", "tick") as Pacing);
  const backend: Backend = backendName === "pglite" ? await openPglite() : await openPostgres();
  const engine = await startBenchServer(backend.db, loopbackLlm(model.url));
  const c = fork(HERE, ["client", engine.started.url], { execArgv: ["--import", "tsx"] });
  let gcMs = 0;
  // perf_hooks' constants.NODE_PERFORMANCE_GC_MAJOR: mark-compact of the whole heap, the rest are scavenges and incremental steps.
  let majorMs = 0;
  const gc = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      gcMs += e.duration;
      if ((e as { detail?: { kind?: number } }).detail?.kind === 4) majorMs += e.duration;
    }
  });
  const session = new Session();
  session.connect();
  try {
    await new Promise<void>((r) => c.once("message", () => r()));
    await ask(c, { kind: "threads", n: conc });
    await ask(c, { kind: "turns", n: warm }); // warm-up: JIT, pools, caches
    gc.observe({ entryTypes: ["gc"] });
    const perRound: { bytes: number; cpuUs: number; gcUs: number }[] = [];
    let all: ReturnType<typeof aggregate> | null = null;
    let allBytes = 0;
    const callers = new Map<string, number>();
    // CPU and GC first, on rounds of their own: the profiler's sampling costs CPU, and what it
    // leaves behind (its samples, the profile it returns) would fill the old generation and bring
    // major GCs into the rounds after it.
    const bare: { cpuUs: number; gcUs: number; majorUs: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      gcMs = 0;
      majorMs = 0;
      const c0 = process.cpuUsage();
      await ask(c, { kind: "turns", n: turns });
      const cu = process.cpuUsage(c0);
      bare.push({
        cpuUs: (cu.user + cu.system) / turns,
        gcUs: (gcMs * 1000) / turns,
        majorUs: (majorMs * 1000) / turns,
      });
    }
    for (let r = 0; r < rounds; r++) {
      const { cpuUs, gcUs, majorUs } = bare[r]!;
      await session.post("HeapProfiler.startSampling", {
        samplingInterval: interval,
        includeObjectsCollectedByMajorGC: !live,
        includeObjectsCollectedByMinorGC: !live,
      });
      await ask(c, { kind: "turns", n: turns });
      const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as {
        profile: { head: HeapNode };
      };
      const { p, bytes } = asCpuProfile(profile.head);
      for (const [k, v] of byProjectCaller(profile.head)) callers.set(k, (callers.get(k) ?? 0) + v);
      const a = aggregate(p);
      perRound.push({ bytes: bytes / turns, cpuUs, gcUs });
      console.log(
        `round ${r + 1}: ${(bytes / turns / 1024).toFixed(1)} KB allocated per turn, CPU ${cpuUs.toFixed(0)} µs per turn, GC ${gcUs.toFixed(0)} µs per turn (${majorUs.toFixed(0)} µs of it major)`,
      );
      if (!all) all = a;
      else
        for (const k of ["byCategory", "byFunction", "nodeByCaller"] as const)
          for (const [key, v] of a[k]) all[k].set(key, (all[k].get(key) ?? 0) + v);
      if (all !== a) ((all.busyUs += a.busyUs), (all.totalUs += a.totalUs));
      allBytes += bytes;
    }
    const sorted = (k: "bytes" | "cpuUs" | "gcUs") => perRound.map((x) => x[k]).sort((x, y) => x - y);
    const med = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
    console.log(
      `${backendName}, ${rounds} rounds × ${turns} turns, ${conc} in flight: allocated per turn min ${(sorted("bytes")[0]! / 1024).toFixed(1)} KB, median ${(med(sorted("bytes")) / 1024).toFixed(1)} KB; CPU per turn min ${sorted("cpuUs")[0]!.toFixed(0)} µs, median ${med(sorted("cpuUs")).toFixed(0)} µs; GC per turn median ${med(sorted("gcUs")).toFixed(0)} µs`,
    );
    const n = rounds * turns;
    const kb = (lines: string[]) =>
      lines.map((l) => l.replace(/(\d+) µs/g, (_, b: string) => `${(Number(b) / 1024).toFixed(2)} KB`));
    console.log(`allocated bytes by category (${(allBytes / n / 1024).toFixed(1)} KB per turn):`);
    for (const l of kb(categoryTable(all!, n))) console.log(l);
    console.log("Node's own allocations by caller:");
    for (const l of kb(callerTable(all!, 20, n))) console.log(l);
    console.log("top allocating functions (self):");
    for (const l of kb(functionTable(all!, top, n))) console.log(l);
    console.log("by the nearest named project function up the stack (inclusive of what it calls):");
    for (const [k, v] of [...callers].sort((x, y) => y[1] - x[1]).slice(0, top))
      console.log(
        `  ${`${((100 * v) / allBytes).toFixed(1)} %`.padStart(7)}${`${(v / n / 1024).toFixed(2)} KB`.padStart(10)}  ${k}`,
      );
  } finally {
    gc.disconnect();
    session.disconnect();
    c.kill("SIGTERM");
    await engine.close();
    await backend.close();
    await model.stop();
  }
}

main().then(
  () => {
    if (argv[0] !== "client") process.exit(0);
  },
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
