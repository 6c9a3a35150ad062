import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * HAProxy in front of N server processes on one PostgreSQL database (doc/scale-out.md).
 *
 * Affinity: `balance uri depth 4` hashes the first four path segments, so every request of one
 * conversation (`/v1/<system>/threads/<id>/…`) lands on one process — its turns and the
 * followers of its runs share that process's in-memory run registry. Consistent hashing moves
 * only the keys of a process that fails; `/readyz` health checks take it out within ~2 s and
 * `option redispatch` re-sends a request whose connection was refused, so any survivor serves
 * the conversation after a failure (state is in PostgreSQL, not in the process).
 */
export interface HaproxyOptions {
  /** Upstream base URLs, e.g. http://127.0.0.1:3001. */
  upstreams: string[];
  port: number;
  host?: string;
  /** Health-check interval, ms. */
  checkIntervalMs?: number;
}

export function haproxyConfig(o: HaproxyOptions): string {
  const inter = o.checkIntervalMs ?? 1000;
  const servers = o.upstreams.map((u, i) => {
    const url = new URL(u);
    return `  server app${i + 1} ${url.hostname}:${url.port || 80} check inter ${inter} fall 2 rise 1`;
  });
  return [
    "global",
    "  maxconn 4096",
    "",
    "defaults",
    "  mode http",
    "  option http-server-close",
    "  option redispatch",
    "  retries 2",
    "  timeout connect 2s",
    // SSE turns and followers stay open as long as a run streams.
    "  timeout client 1h",
    "  timeout server 1h",
    "  timeout http-request 30s",
    "",
    "frontend gateway",
    `  bind ${o.host ?? "127.0.0.1"}:${o.port}`,
    "  default_backend servers",
    "",
    "backend servers",
    "  balance uri depth 4",
    "  hash-type consistent",
    "  option httpchk GET /readyz",
    ...servers,
    "",
  ].join("\n");
}

export interface Haproxy {
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

export const HAPROXY_BIN = process.env.HAPROXY_BIN ?? "/usr/sbin/haproxy";

/** Writes the config to a temporary folder and runs HAProxy in the foreground (-db) until closed. */
export async function startHaproxy(o: HaproxyOptions): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, haproxyConfig(o));
  const child = spawn(HAPROXY_BIN, ["-db", "-f", cfg], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d) => (err = (err + d).slice(-4000)));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const host = o.host ?? "127.0.0.1";
  const until = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${err}`);
    const up = await new Promise<boolean>((r) => {
      const s = connect(o.port, host, () => (s.destroy(), r(true)));
      s.once("error", () => r(false));
    });
    if (up) break;
    if (Date.now() > until) {
      child.kill("SIGKILL");
      throw new Error(`haproxy not listening within 10 s: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://${host}:${o.port}`,
    child,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// `npx tsx scripts/haproxy.ts [--port 8080] [--host 127.0.0.1] url...` prints the config
// (e.g. `> deploy/haproxy.cfg`); with `--run` it also starts HAProxy with it.
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const take = (k: string) => {
    const i = args.indexOf(k);
    return i < 0 ? undefined : args.splice(i, 2)[1];
  };
  const port = Number(take("--port") ?? 8080);
  const host = take("--host") ?? "127.0.0.1";
  const run = args.includes("--run");
  const upstreams = args.filter((a) => a !== "--run");
  if (!upstreams.length) {
    console.error("usage: npx tsx scripts/haproxy.ts [--port 8080] [--host 127.0.0.1] [--run] http://host:port ...");
    process.exit(2);
  }
  if (!run) process.stdout.write(haproxyConfig({ upstreams, port, host }));
  else {
    const p = await startHaproxy({ upstreams, port, host });
    console.log(`haproxy on ${p.url} -> ${upstreams.join(", ")}`);
    for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, () => void p.close().then(() => process.exit(0)));
  }
}
