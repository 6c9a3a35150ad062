import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Where a process's CPU went, from a V8 `.cpuprofile` (`node --cpu-prof`): self time by category —
 * a package (`xstate`, `postgres`, `openai`, `hono`, `zod`, `pino`, …), a folder of the project's
 * (`http/`, `driver/`, `storage/`, `systems/clinic/`, `llm/`; the bundle dist/main.js is mapped
 * back to its sources through its source map), Node's own modules (`node:net`, `node:stream`, …),
 * GC, and `(program)` (native work V8 cannot attribute to a JS function). A native function (a
 * builtin such as JSON.parse, or a binding such as a socket write) counts to the category of the
 * JS function that called it. Optionally only the samples between two timestamps (µs of the
 * monotonic clock, the profile's own) count: the steady window of a load, not the start-up.
 *
 *   npx tsx bench/profile-agg.ts <file.cpuprofile> [turns] [cap µs per sample, e.g. the interval]
 */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Aggregate {
  /** Sampled time in the window, µs (idle included). */
  totalUs: number;
  /** Sampled time not idle, µs. */
  busyUs: number;
  byCategory: Map<string, number>;
  /** `category :: function (file:line)` → self µs. */
  byFunction: Map<string, number>;
  /** Node's own time (`node:*` categories) by the nearest package or project folder up the stack: who asked for it. */
  nodeByCaller: Map<string, number>;
  /** Whether the window fell inside the profile (else every sample counted). */
  windowed: boolean;
}

/** Resolves dist/main.js positions to the project's sources (`http/sse.ts`, 0-based line), or null when it cannot. */
function sourceMapper(): (cf: CallFrame) => { path: string; line: number } | null {
  const maps = new Map<string, SourceMap | null>();
  return (cf) => {
    if (!cf.url.startsWith("file://") || !cf.url.endsWith(".js")) return null;
    let map = maps.get(cf.url);
    if (map === undefined) {
      const file = `${fileURLToPath(cf.url)}.map`;
      map = existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, "utf8")) as never) : null;
      maps.set(cf.url, map);
    }
    if (!map) return null;
    const e = map.findEntry(cf.lineNumber, cf.columnNumber) as { originalSource?: string; originalLine?: number };
    if (!e.originalSource) return null;
    const path = e.originalSource.startsWith("file://")
      ? fileURLToPath(e.originalSource)
      : resolve(dirname(fileURLToPath(cf.url)), e.originalSource);
    return { path, line: e.originalLine ?? cf.lineNumber };
  };
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The category of a project source path: its folder (systems/ two levels deep), or the file at the root. */
function projectFolder(path: string): string {
  const rel = path.startsWith(root + "/") ? path.slice(root.length + 1) : path;
  const parts = rel.split("/");
  if (parts.length === 1) return parts[0]!;
  if (parts[0] === "systems" && parts.length > 2) return `${parts[0]}/${parts[1]}/`;
  return `${parts[0]}/`;
}

/** Node's module name of a `node:` URL: `node:internal/streams/writable` → `stream`, `node:_http_server` → `http`. */
function nodeModule(url: string): string {
  const rest = url.slice(5).replace(/^internal\//, "");
  const parts = rest.split("/");
  // Node's bundled dependencies: undici is fetch (the openai SDK's transport).
  if (parts[0] === "deps" && parts[1]) return parts[1];
  const first = parts[0]!.replace(/^_/, "");
  if (first === "stream_base_commons" || first === "net") return "net";
  if (first === "streams" || first.startsWith("stream")) return "stream";
  if (first.startsWith("http") || first === "http") return "http";
  if (first === "process" || first === "timers") return first;
  if (first === "event_target" || first === "events") return "events";
  return first;
}

/**
 * `capUs`: the most one sample may stand for. V8 samples on a wall-clock timer and charges the
 * time since the last sample to the function it finds; a thread the kernel preempted (another
 * process ran on its core) resumes where it stopped, typically in a system call, and that sample
 * would carry the whole time it waited. Capping each sample at the sampling interval counts the
 * thread's running time instead (checked against /proc's CPU of the main thread).
 */
export function aggregate(p: CpuProfile, window?: { fromUs: number; toUs: number }, capUs = Infinity): Aggregate {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const mapSource = sourceMapper();
  const cat = new Map<number, string>();
  const label = new Map<number, string>();
  const own = (n: ProfileNode): string | null => {
    const { url, functionName } = n.callFrame;
    if (!url) return functionName.startsWith("(") ? functionName : null;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (pkg) return pkg[1]!;
    if (url.startsWith("node:")) return `node:${nodeModule(url)}`;
    const src = mapSource(n.callFrame)?.path;
    if (src) {
      const inPkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(src);
      return inPkg ? inPkg[1]! : projectFolder(src);
    }
    return projectFolder(url.startsWith("file://") ? fileURLToPath(url) : url);
  };
  const categoryOf = (id: number): string => {
    const known = cat.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id)!;
    let c = own(n);
    // A native function counts to its JS caller's category.
    if (c === null) {
      const up = parent.get(id);
      c = up === undefined ? "(native)" : categoryOf(up);
      if (c === "(root)") c = "(native)";
    }
    cat.set(id, c);
    return c;
  };
  const labelOf = (id: number): string => {
    const known = label.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id)!;
    const { url, functionName, lineNumber } = n.callFrame;
    const mapped = mapSource(n.callFrame);
    const src = mapped?.path ?? (url.startsWith("file://") ? fileURLToPath(url) : url);
    const short = src.replace(/^.*node_modules\//, "").replace(root + "/", "");
    const line = (mapped?.line ?? lineNumber) + 1;
    const l = `${categoryOf(id)} :: ${functionName || "(anonymous)"}${short ? ` (${short}:${line})` : ""}`;
    label.set(id, l);
    return l;
  };
  const callerCat = new Map<number, string>();
  const callerOf = (id: number): string => {
    const known = callerCat.get(id);
    if (known !== undefined) return known;
    const up = parent.get(id);
    let c = "(event loop)";
    if (up !== undefined) {
      const uc = categoryOf(up);
      c = uc.startsWith("node:") || uc.startsWith("(") ? callerOf(up) : uc;
    }
    callerCat.set(id, c);
    return c;
  };
  const windowed = !!window && window.fromUs >= p.startTime && window.toUs <= p.endTime;
  const nodeByCaller = new Map<string, number>();
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let totalUs = 0;
  let idle = 0;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    const d = Math.min(dt, capUs);
    if (windowed && (t < window!.fromUs || t > window!.toUs)) continue;
    // timeDeltas[i] is the time since the previous sample: charged to this sample's node.
    const id = p.samples[i]!;
    const c = categoryOf(id);
    totalUs += d;
    if (c === "(idle)") {
      idle += d;
      continue;
    }
    byCategory.set(c, (byCategory.get(c) ?? 0) + d);
    const f = labelOf(id);
    byFunction.set(f, (byFunction.get(f) ?? 0) + d);
    if (c.startsWith("node:")) {
      const k = `${c} ← ${callerOf(id)}`;
      nodeByCaller.set(k, (nodeByCaller.get(k) ?? 0) + d);
    }
  }
  return { totalUs, busyUs: totalUs - idle, byCategory, byFunction, nodeByCaller, windowed };
}

/** The categories, largest first, as table rows: name, share of busy time, µs per turn (when `turns`). */
export function categoryTable(a: Aggregate, turns?: number, top = 30): string[] {
  const rows = [...a.byCategory].sort((x, y) => y[1] - x[1]);
  const shown = rows.slice(0, top);
  const rest = rows.slice(top).reduce((s, [, v]) => s + v, 0);
  if (rest > 0) shown.push([`(${rows.length - top} more)`, rest]);
  const line = (name: string, us: number) =>
    `  ${name.padEnd(28)}${`${((100 * us) / a.busyUs).toFixed(1)} %`.padStart(8)}${turns ? `${(us / turns).toFixed(0)} µs`.padStart(10) : ""}`;
  return [
    `  ${"category".padEnd(28)}${"share".padStart(8)}${turns ? "per turn".padStart(10) : ""}`,
    ...shown.map(([c, us]) => line(c, us)),
    line("total (busy)", a.busyUs),
  ];
}

/** Node's own time by who called it: `node:net ← http/` (the engine's SSE writes), `node:net ← postgres` (statements)… */
export function callerTable(a: Aggregate, top = 15, turns?: number): string[] {
  return [...a.nodeByCaller]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(
      ([k, us]) =>
        `  ${`${((100 * us) / a.busyUs).toFixed(1)} %`.padStart(7)}${turns ? `${(us / turns).toFixed(0)} µs`.padStart(9) : ""}  ${k}`,
    );
}

export function functionTable(a: Aggregate, top = 25, turns?: number): string[] {
  return [...a.byFunction]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(
      ([f, us]) =>
        `  ${`${((100 * us) / a.busyUs).toFixed(1)} %`.padStart(7)}${turns ? `${(us / turns).toFixed(0)} µs`.padStart(9) : ""}  ${f}`,
    );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) throw new Error("usage: npx tsx bench/profile-agg.ts <file.cpuprofile> [turns]");
  const turns = process.argv[3] ? Number(process.argv[3]) : undefined;
  const cap = process.argv[4] ? Number(process.argv[4]) : Infinity;
  const a = aggregate(JSON.parse(readFileSync(file, "utf8")) as CpuProfile, undefined, cap);
  console.log(`busy ${(a.busyUs / 1000).toFixed(0)} ms of ${(a.totalUs / 1000).toFixed(0)} ms sampled`);
  for (const l of categoryTable(a, turns)) console.log(l);
  console.log("Node's own time by caller:");
  for (const l of callerTable(a, 15, turns)) console.log(l);
  console.log("top functions (self time):");
  for (const l of functionTable(a, 40, turns)) console.log(l);
}
