import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * HAProxy in front of N server processes on one PostgreSQL database (doc/scale-out.md).
 *
 * Affinity: the backend hashes the conversation id (consistent hashing), so every request of one
 * conversation lands on one process — its turns, the operator's requests and the followers of
 * its runs share that process's in-memory run registry (a local follower reads no database).
 * The id is the segment after `/v1/<system>/threads|conversations/` (or `/v1/conversations/`);
 * a run's follower (`/v1/runs/<runId>/events`, no conversation in the path) names it in
 * `X-Conversation-Id`, the header the turn's response carried (client/turn.ts sends it back).
 * A request with no conversation (a new thread, /healthz) goes round robin. Consistent hashing
 * moves only the keys of a process that fails; `/readyz` health checks take it out within
 * `fall × inter` and `option redispatch` re-sends a request whose connection was refused, so a
 * survivor serves the conversation after a failure (state is in PostgreSQL, not in the process).
 */
export interface HaproxyOptions {
  /** Upstream base URLs, e.g. http://127.0.0.1:3001. */
  upstreams: string[];
  port: number;
  host?: string;
  /** Health-check interval, ms. */
  checkIntervalMs?: number;
  /** Answer with `X-Served-By: app<i>` (the server's name; tests and benchmarks). */
  servedByHeader?: boolean;
  /** A stats socket (`show stat`, `show servers state`) at this path. */
  statsSocket?: string;
  /**
   * A DNS server (e.g. Docker's 127.0.0.11:53) that re-resolves the upstreams' names, so a
   * restarted container's new address is picked up; a name not resolvable yet leaves its server
   * down instead of stopping HAProxy.
   */
  dns?: string;
}

export function haproxyConfig(o: HaproxyOptions): string {
  const inter = o.checkIntervalMs ?? 1000;
  const servers = o.upstreams.map((u, i) => {
    const url = new URL(u);
    const resolve = o.dns ? " resolvers dns init-addr last,libc,none" : "";
    return `  server app${i + 1} ${url.hostname}:${url.port || 80} check inter ${inter} fall 2 rise 1${resolve}`;
  });
  return [
    "# Conversation affinity (hash of the conversation id), /readyz health checks, redispatch. See doc/scale-out.md.",
    "global",
    "  maxconn 4096",
    ...(o.statsSocket ? [`  stats socket ${o.statsSocket} mode 600 level user`] : []),
    "",
    ...(o.dns ? ["resolvers dns", `  nameserver dns1 ${o.dns}`, "  hold valid 10s", ""] : []),
    "defaults",
    "  mode http",
    "  option http-server-close",
    "  option redispatch",
    "  retries 2",
    "  timeout connect 2s",
    // A health check may take this long (default: `inter`, which is short in tests): a busy
    // server's slow /readyz must not mark it down — that would move its conversations.
    "  timeout check 2s",
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
    "  # Affinity: hash of the conversation id (X-Conversation-Id, else from the path); none: round robin.",
    "  acl system_conversation path_reg ^/v1/[^/]+/(threads|conversations)/[^/]+",
    "  acl conversation path_reg ^/v1/conversations/[^/]+",
    "  http-request set-var(txn.conversation) req.hdr(x-conversation-id) if { req.hdr(x-conversation-id) -m found }",
    "  http-request set-var(txn.conversation) path,field(5,/) if !{ var(txn.conversation) -m found } system_conversation",
    "  http-request set-var(txn.conversation) path,field(4,/) if !{ var(txn.conversation) -m found } conversation",
    "  balance hash var(txn.conversation)",
    "  hash-type consistent",
    "  option httpchk GET /readyz",
    ...(o.servedByHeader ? ["  http-response set-header X-Served-By %[srv_name]"] : []),
    ...servers,
    "",
  ].join("\n");
}

export interface Haproxy {
  url: string;
  child: ChildProcess;
  /** `show stat` of the backend's servers: name (app1…), status (UP, DOWN…), CSV fields by name. */
  stats(): Promise<ServerStat[]>;
  close(): Promise<void>;
}

export interface ServerStat {
  name: string;
  status: string;
  /** Requests sent to the server (sessions; one request per session with http-server-close upstream). */
  sessions: number;
  fields: Record<string, string>;
}

/** One command on an HAProxy stats socket; the answer as text. */
export function statsCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const s = createConnection(socket, () => s.end(`${command}\n`));
    s.on("data", (d) => (out += d));
    s.once("error", reject);
    s.once("close", () => resolve(out));
  });
}

export function parseServerStats(csv: string): ServerStat[] {
  const [head, ...rows] = csv.trim().split("\n");
  const keys = head!.replace(/^# /, "").split(",");
  return rows
    .map((r) => Object.fromEntries(r.split(",").map((v, i) => [keys[i]!, v])))
    .filter((f) => f.pxname === "servers" && f.svname !== "BACKEND")
    .map((f) => ({ name: f.svname!, status: f.status!, sessions: Number(f.stot), fields: f }));
}

export const HAPROXY_BIN = process.env.HAPROXY_BIN ?? "/usr/sbin/haproxy";

/** Writes the config to a temporary folder and runs HAProxy in the foreground (-db) until closed. */
export async function startHaproxy(o: HaproxyOptions): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
  const cfg = join(dir, "haproxy.cfg");
  const socket = join(dir, "stats.sock");
  writeFileSync(cfg, haproxyConfig({ ...o, statsSocket: o.statsSocket ?? socket }));
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
    stats: async () => parseServerStats(await statsCommand(o.statsSocket ?? socket, "show stat")),
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The command line: `[--port 8080] [--host 127.0.0.1] [--dns host:port] [--run] url...`. */
export function parseArgs(argv: string[]): { options: HaproxyOptions; run: boolean } {
  const args = [...argv];
  const take = (k: string) => {
    const i = args.indexOf(k);
    return i < 0 ? undefined : args.splice(i, 2)[1];
  };
  const port = Number(take("--port") ?? 8080);
  const host = take("--host") ?? "127.0.0.1";
  const dns = take("--dns");
  const run = args.includes("--run");
  const upstreams = args.filter((a) => a !== "--run");
  return { options: { upstreams, port, host, ...(dns ? { dns } : {}) }, run };
}

// `npx tsx scripts/haproxy.ts [--port 8080] [--host 127.0.0.1] [--dns host:port] url...` prints
// the config (e.g. `> deploy/haproxy.cfg`, with the command in its first line); with `--run` it
// also starts HAProxy with it.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { options, run } = parseArgs(process.argv.slice(2));
  if (!options.upstreams.length) {
    console.error(
      "usage: npx tsx scripts/haproxy.ts [--port 8080] [--host 127.0.0.1] [--dns host:port] [--run] http://host:port ...",
    );
    process.exit(2);
  }
  const command = `npx tsx scripts/haproxy.ts ${process.argv.slice(2).join(" ")}`;
  if (!run) process.stdout.write(`# Generated by \`${command} > deploy/haproxy.cfg\`\n${haproxyConfig(options)}`);
  else {
    const p = await startHaproxy(options);
    console.log(`haproxy on ${p.url} -> ${options.upstreams.join(", ")}`);
    for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, () => void p.close().then(() => process.exit(0)));
  }
}
