import { loadavg } from "node:os";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import type { Backend } from "./backends";
import { startFloorHttp } from "./floor-http";
import type { Goal } from "./goals";
import { HttpClient } from "./http";
import { loopbackLlm, startLoopbackModel, type Script } from "./model";
import { phaseSummary, readPhases, type PhaseReading } from "./phases";
import { bytes, lanes, ms, perSec, ratio, sleep, summarize } from "./stats";
import { checkedTurn, floorHttpTarget, REPLY, startBenchServer, type Target } from "./targets";

/**
 * Paced mode (issue 33): the model streams its reply one word every `tokenGapMs` (a real model's
 * pace), and `n` conversations are open at once — what the peer harness's `--token-gap 40 --concs
 * 200,800` measures, here against the project's own FLOOR-HTTP in the same run. Per kind and load:
 * throughput, turn and first-token p50/p99, errors, and what explains a tail — the event-loop
 * delay (p99, max) and GC pause time while the window ran, the process's RSS growth per open
 * stream, and (outside the windows) the live memory each open stream holds.
 * The engine and the floor alternate windows; the load client and the model share the process.
 */
export interface PacedOptions {
  quick: boolean;
  log: (line: string) => void;
  tokenGapMs: number;
  concs: number[];
  windowS: number;
}

const load = () => loadavg()[0]!.toFixed(1);
const text = (i: number) => `Здравствуйте, вопрос ${i}: сколько стоит первичный приём?`;

/** The branch's reply, word by word, `gap` ms apart; the router answers at once (it is not streamed). */
export function pacedScript(gap: number): Script {
  const words = REPLY.match(/\S+\s*/g) ?? [REPLY];
  return (role) => {
    if (role === "router") return "general_info";
    if (role !== "branch" && role !== "answer") return "{}";
    return {
      tokens: (async function* () {
        for (const w of words) {
          await sleep(gap);
          yield w;
        }
      })(),
    };
  };
}

interface Window {
  turns: number[];
  ttft: number[];
  errors: number;
  elapsedMs: number;
  eldP99: number;
  eldMax: number;
  gcMs: number;
  rssPerStream: number;
  /** This process's CPU per finished turn (server, load client and model share it). */
  cpuPerTurn: number;
  /** This process's CPU time ÷ wall time while the window ran (1 = one core busy all the time). */
  cpuShare: number;
  /** The engine's turn phases in this window (server side), p50 and p99 as bucket bounds. */
  phases: string;
}

async function window(t: Target, ids: string[], durationMs: number): Promise<Window> {
  const turns: number[] = [];
  const ttft: number[] = [];
  let i = 0;
  const eld = monitorEventLoopDelay({ resolution: 10 });
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  gc.observe({ entryTypes: ["gc"] });
  const rss0 = process.memoryUsage().rss;
  let rssPeak = rss0;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 100);
  eld.enable();
  const p0: PhaseReading = await readPhases();
  const c0 = process.cpuUsage();
  const r = await lanes(ids.length, durationMs, async (lane) => {
    const t0 = performance.now();
    let first = Number.NaN;
    await checkedTurn(t, ids[lane]!, text(i++), (e) => {
      if (e.event === "token" && Number.isNaN(first)) first = performance.now() - t0;
    });
    turns.push(performance.now() - t0);
    ttft.push(first);
  });
  const cpu = process.cpuUsage(c0);
  const p1 = await readPhases();
  const phases = phaseSummary(p0, p1);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  eld.disable();
  clearInterval(sampler);
  gc.disconnect();
  return {
    turns,
    ttft,
    errors: r.errors,
    elapsedMs: r.elapsedMs,
    eldP99: eld.percentile(99) / 1e6,
    eldMax: eld.max / 1e6,
    gcMs,
    rssPerStream: (rssPeak - rss0) / ids.length,
    cpuPerTurn: cpuMs / Math.max(1, turns.length),
    cpuShare: cpuMs / r.elapsedMs,
    phases,
  };
}

/**
 * Live memory per open stream, this process (JS heap + external buffers after a full GC): every
 * id of `ids` starts a turn at once; once each has its first event (the server holds them all)
 * the memory is read again and the growth over the idle reading divided by the turns still open.
 * Needs `--expose-gc` (`npm run bench` passes it); NaN without. Outside the timed windows, so the
 * forced collections touch no latency figure. The load client's and the model's share of a stream
 * live in this process too: an upper bound for the server's own.
 */
async function livePerStream(t: Target, ids: string[]): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return Number.NaN;
  const live = () => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const idle = live();
  let started = 0;
  let finished = 0;
  let failed = 0;
  const turns: Promise<unknown>[] = [];
  for (const [i, id] of ids.entries()) {
    // In groups of 50, 10 ms apart: streams opening as lanes would, not one burst of n connections.
    if (i > 0 && i % 50 === 0) await sleep(10);
    let seen = false;
    turns.push(
      checkedTurn(t, id, text(i), () => {
        if (!seen) ((seen = true), started++);
      })
        // A turn that fails (a reset connection) only ends early: it is not counted as open.
        .catch(() => failed++)
        .finally(() => finished++),
    );
  }
  const until = performance.now() + 30_000;
  while (started + failed < ids.length && performance.now() < until) await sleep(5);
  const open = ids.length - finished;
  const perStream = open > 0 ? (live() - idle) / open : Number.NaN;
  await Promise.all(turns);
  return perStream;
}

export async function benchPaced(backend: Backend, o: PacedOptions): Promise<Goal[]> {
  const { log } = o;
  const model = await startLoopbackModel(pacedScript(o.tokenGapMs));
  const engine = await startBenchServer(backend.db, loopbackLlm(model.baseURL));
  const floorServer = await startFloorHttp(backend.db.sql, model.baseURL);
  const floorClient = new HttpClient(floorServer.url);
  const targets: Record<"floor" | "engine", Target> = { floor: floorHttpTarget(floorClient), engine: engine.target };
  const kinds = ["floor", "engine"] as const;
  const goals: Goal[] = [];
  const onServer = backend.name === "postgres";
  try {
    log(
      `paced — ${backend.name}: the model streams a word every ${o.tokenGapMs} ms (${(REPLY.match(/\S+\s*/g) ?? []).length} words), ${o.concs.join(" and ")} conversations in flight, ${o.windowS} s windows; load average ${load()}`,
    );
    const pad = (x: string, n = 11) => x.padStart(n);
    log(
      `  ${"in flight".padEnd(10)}${"".padEnd(12)}${pad("turns/s")}${pad("turn p50")}${pad("turn p99")}${pad("TTFT p50")}${pad("TTFT p99")}${pad("errors")}${pad("ELD p99")}${pad("ELD max")}${pad("GC")}${pad("CPU/turn")}${pad("CPU share")}${pad("RSS/stream")}${pad("load")}`,
    );
    for (const n of o.concs) {
      const ids: Record<string, string[]> = {};
      for (const k of kinds) ids[k] = await Promise.all(Array.from({ length: n }, () => targets[k].create()));
      const res: Partial<Record<(typeof kinds)[number], Window>> = {};
      // Floor first, then the engine: each window starts from the same quiet state (a short pause between).
      for (const k of kinds) {
        await sleep(1000);
        res[k] = await window(targets[k], ids[k]!, o.windowS * 1000);
        const w = res[k]!;
        const tu = summarize(w.turns);
        const tf = summarize(w.ttft);
        log(
          `  ${String(n).padEnd(10)}${(k === "floor" ? "FLOOR-HTTP" : "ENGINE").padEnd(12)}${pad(perSec(w.turns.length / (w.elapsedMs / 1000)))}${pad(ms(tu.p50))}${pad(ms(tu.p99))}${pad(ms(tf.p50))}${pad(ms(tf.p99))}${pad(String(w.errors))}` +
            `${pad(ms(w.eldP99))}${pad(ms(w.eldMax))}${pad(ms(w.gcMs))}${pad(ms(w.cpuPerTurn))}${pad(w.cpuShare.toFixed(2))}${pad(bytes(w.rssPerStream))}${pad(load())}`,
        );
        if (k === "engine") log(`  ${"".padEnd(22)}server-side phases p50/p99: ${w.phases}`);
      }
      const live: Record<string, number> = {};
      for (const k of kinds) live[k] = await livePerStream(targets[k], ids[k]!);
      log(
        `  ${String(n).padEnd(10)}live memory per open stream (heap + buffers after GC, client and model included): FLOOR-HTTP ${bytes(live.floor!)}, ENGINE ${bytes(live.engine!)}`,
      );
      const f = res.floor!;
      const e = res.engine!;
      const r = {
        tput: e.turns.length / e.elapsedMs / (f.turns.length / f.elapsedMs),
        p99: summarize(e.turns).p99 / summarize(f.turns).p99,
        ttft99: summarize(e.ttft).p99 / summarize(f.ttft).p99,
        p50: summarize(e.turns).p50 / summarize(f.turns).p50,
      };
      log(
        `  ${String(n).padEnd(10)}${"ENGINE÷FLOOR".padEnd(12)}${pad(ratio(r.tput))}${pad(ratio(r.p50))}${pad(ratio(r.p99))}${pad(ratio(summarize(e.ttft).p50 / summarize(f.ttft).p50))}${pad(ratio(r.ttft99))}`,
      );
      const name = (g: string) => `paced.${backend.name}.${n}.${g}`;
      goals.push(
        { name: name("turnP99"), ratio: r.p99, goal: "≤ 1.2× FLOOR-HTTP", ok: r.p99 <= 1.2, informational: !onServer },
        {
          name: name("ttftP99"),
          ratio: r.ttft99,
          goal: "≤ 1.2× FLOOR-HTTP",
          ok: r.ttft99 <= 1.2,
          informational: !onServer,
        },
        {
          name: name("throughput"),
          ratio: r.tput,
          goal: "≥ 0.9× FLOOR-HTTP",
          ok: r.tput >= 0.9,
          informational: !onServer,
        },
        { name: name("errors"), ratio: e.errors, goal: "0 errors", ok: e.errors === 0, informational: !onServer },
        {
          name: name("liveKBPerStream"),
          ratio: live.engine! / 1024,
          goal: "≤ 64 KB per open stream",
          ok: live.engine! <= 64 * 1024,
          informational: true,
        },
      );
    }
    log(
      "  ELD: event-loop delay while the window ran; GC: summed pause time; CPU share: the process's CPU time ÷ wall time (near 1: one core saturated, turns queue for the event loop); RSS/stream: the process's peak RSS growth over its idle RSS ÷ streams in flight (server, client and model share the process); phases (ds_turn_phase_seconds, bucket bounds): admit = request until its run is stored, first_token = run stored until the first token is sent, commit = the turn's commit incl. waiting for a connection",
    );
    return goals;
  } finally {
    floorClient.close();
    await floorServer.close();
    await engine.close();
    await model.close();
  }
}
