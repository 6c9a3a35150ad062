import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
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

/** User + system CPU of a process so far, ms (/proc/<pid>/stat, clock ticks of 10 ms). */
export function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
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
