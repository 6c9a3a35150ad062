import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A free loopback port (bound and released at once). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** User + system CPU of a process so far (or of one of its threads, `tid`), ms (/proc/<pid>/stat, clock ticks of 10 ms). */
export function cpuOf(pid: number, tid?: number): number {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // utime, stime (fields 14, 15) in 1/100 s
}

/**
 * The whole machine's CPU time so far, ms: busy (every state but idle and iowait) and total,
 * summed over all CPUs (/proc/stat's first line, clock ticks of 10 ms). Two readings give how
 * many cores were busy in between: Δbusy ÷ Δtotal × CPUs.
 */
export function machineCpu(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: (total - f[3]! - f[4]!) * 10, total: total * 10 };
}

/** Resident set size of a process, bytes (/proc/<pid>/status VmRSS). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
}

export interface Proc {
  url: string;
  child: ChildProcess;
  /** From spawn to the first healthy answer, ms. */
  startMs: number;
  cpuMs(): number;
  rss(): number;
  stop(): Promise<void>;
}

/** Waits until the server at `url` answers its liveness probe (a child started without spawnProc). */
export async function untilHealthy(url: string): Promise<void> {
  while (
    !(await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  )
    await new Promise((r) => setTimeout(r, 200));
}

/**
 * Spawns `node <nodeArgs>` with PORT/HOST set and waits until `health` answers below 500.
 * `nodeArgs` e.g. ["--import", "tsx", "main.ts"] (what `npm run start:ts` runs) or
 * ["--enable-source-maps", "dist/main.js"] (what `npm start` runs).
 */
export async function spawnProc(nodeArgs: string[], env: Record<string, string>, health: string): Promise<Proc> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawn(process.execPath, nodeArgs, {
    cwd: process.cwd(),
    env: { ...(process.env as Record<string, string>), ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (d) => (err = (err + d).slice(-4000)));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const until = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${nodeArgs.join(" ")} exited (${child.exitCode}): ${err}`);
    const ok = await fetch(`${url}${health}`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) break;
    if (Date.now() > until) {
      child.kill("SIGKILL");
      throw new Error(`${nodeArgs.join(" ")} not up within 120 s: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const startMs = performance.now() - t0;
  return {
    url,
    child,
    startMs,
    cpuMs: () => cpuOf(child.pid!),
    rss: () => rssOf(child.pid!),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** The parent pid of a process, or null when it is gone. */
function ppidOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** A process and all its live descendants (`npm start` → node; the build step has exited by then). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const pp = ppidOf(Number(d));
    if (pp === null) continue;
    children.set(pp, [...(children.get(pp) ?? []), Number(d)]);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop()!;
    if (ppidOf(p) === null) continue;
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

/** Write system calls (write, writev…: every socket write) a process made so far (/proc/<pid>/io), 0 if unreadable. */
export function writeCallsOf(pid: number): number {
  try {
    const m = /^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** CPU ms of each of `pids` so far; a pid that is gone reads 0. */
export const cpuOfAll = (pids: number[]): number =>
  pids.reduce((a, pid) => a + (existsSync(`/proc/${pid}`) ? cpuOf(pid) : 0), 0);

/** A child process started by a benchmark, stopped by its own pid (SIGTERM, SIGKILL after 10 s). */
export interface Child {
  child: ChildProcess;
  /** The first capture of `ready` (a URL). */
  url: string;
  /** The tail of what it wrote (for error messages). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Spawns `cmd args` with exactly `env` and resolves once its output matches `ready` (first capture group = its URL).
 * Its stdout is drained (a server's JSON log lines go nowhere, as to a log collector that keeps
 * up), the last 8 KB kept for errors.
 */
export function startChild(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs = 180_000,
): Promise<Child> {
  const child = spawn(cmd, args, {
    cwd: process.cwd(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let url: string | null = null;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(t);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${cmd} ${args.join(" ")}: not ready within ${timeoutMs / 1000} s: ${out.slice(-2000)}`));
    }, timeoutMs);
    const seen = (d: Buffer) => {
      out = (out + d).slice(-8192);
      if (url !== null) return;
      const m = ready.exec(out);
      if (!m) return;
      url = m[1]!;
      clearTimeout(timer);
      resolve({ child, url, output: () => out, stop });
    };
    child.stdout!.on("data", seen);
    child.stderr!.on("data", seen);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (url === null) reject(new Error(`${cmd} ${args.join(" ")} exited ${code}: ${out.slice(-2000)}`));
    });
  });
}
