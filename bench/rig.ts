import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { benchServerUrl, walShareOf } from "./backends";
import { loopbackModelEnv, type Pacing } from "./model";
import { freePort, processTree, startChild, type Child } from "./procs";

/**
 * The separate processes of the turn benchmark, as the peer harness (../shared/bench/peer) runs
 * them: the scripted model and FLOOR-HTTP in children of their own (bench/children.ts), the engine
 * through the real start command (`npm start`: the build, then `node dist/main.js`), each server
 * on a database of its own — a scratch database on the PostgreSQL server, or an embedded PGlite in
 * a folder of its own (`npm start` without DATABASE_URL).
 */
const CHILDREN = fileURLToPath(new URL("./children.ts", import.meta.url));
const READY = /ready (\S+)/;

/** The parent's environment without anything that would configure the engine differently from its defaults. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(DATABASE_URL|DATA_DIR|API_TOKENS|LOG_LEVEL|OPENAI_|LLM_|PORT$|HOST$|NODE_OPTIONS$|DEMO_DATA$)/.test(k))
      env[k] = v;
  return env;
}

export const startModel = (pacing: Pacing): Promise<Child> =>
  startChild(process.execPath, ["--import", "tsx", CHILDREN, "model", "--pacing", pacing], cleanEnv(), READY);

export const startFloor = (model: string, db: { url: string } | { dir: string }): Promise<Child> =>
  startChild(
    process.execPath,
    [
      "--import",
      "tsx",
      CHILDREN,
      "floor",
      "--model",
      model,
      ...("url" in db ? ["--db", db.url] : ["--pglite", db.dir]),
    ],
    cleanEnv(),
    READY,
  );

/** What the engine is started with: the scripted model for every role, its own database, defaults otherwise. */
export function engineEnv(port: number, model: string, db: { url: string } | { dir: string }): NodeJS.ProcessEnv {
  return {
    ...cleanEnv(),
    PORT: String(port),
    HOST: "127.0.0.1",
    ...("url" in db ? { DATABASE_URL: db.url } : { DATA_DIR: db.dir }),
    // A fresh embedded database would get the demo knowledge base; the PostgreSQL runs have none.
    DEMO_DATA: "false",
    ...loopbackModelEnv(model, "bench-other"),
  };
}

const LISTENING = /listening on (http:\/\/[\d.]+:\d+)/;

export interface Engine {
  url: string;
  /** The server process (node dist/main.js under npm). */
  pid: number;
  /** npm and the server: the process tree whose CPU is the engine's. */
  pids: number[];
  stop(): Promise<void>;
}

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
};

/** `npm start` (build + `node dist/main.js`), as a user starts the server; resolves once it listens. */
export async function startEngine(model: string, db: { url: string } | { dir: string }): Promise<Engine> {
  const port = await freePort();
  const npm = await startChild("npm", ["start", "--silent"], engineEnv(port, model, db), LISTENING);
  const pids = processTree(npm.child.pid!);
  const pid = pids.find((p) => cmdline(p).includes("dist/main.js")) ?? npm.child.pid!;
  return {
    url: npm.url,
    pid,
    pids,
    async stop() {
      // The server first (its graceful shutdown), then npm if it is still there.
      if (pid !== npm.child.pid)
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          /* already gone */
        }
      await npm.stop();
    },
  };
}

/** The start script's node arguments (package.json `scripts.start`: `exec node <args>`). */
export function startArgs(): string[] {
  const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
  const words = pkg.scripts.start!.split(/\s+/);
  return words.slice(words.indexOf("node") + 1);
}

/** Scratch databases on the PostgreSQL server for one run, and what is read about them from outside. */
export interface Scratch {
  url(db: string): string;
  /** Creates a database of this run (named `bench_<time>_<run>_<suffix>`; backends.ts drops stale ones). */
  create(suffix: string): Promise<string>;
  /** PIDs of the PostgreSQL backends connected to `db`. */
  backendPids(db: string): Promise<number[]>;
  insertLsn(): Promise<string>;
  /** WAL bytes and commit records of `db`'s blocks and transactions between two LSNs (pg_walinspect), or null. */
  wal(db: string, from: string, to: string): Promise<{ bytes: number; commits: number } | null>;
  close(): Promise<void>;
}

export async function scratchPostgres(serverUrl = benchServerUrl()): Promise<Scratch> {
  const run = `bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 2, onnotice: () => {} });
  await admin`select 1`;
  const made: string[] = [];
  const url = (db: string) => {
    const u = new URL(serverUrl);
    u.pathname = `/${db}`;
    return u.toString();
  };
  // pg_walinspect lives in a control database of the run, so no connection of it sits in the measured ones.
  const ctlName = `${run}_ctl`;
  await admin.unsafe(`create database ${ctlName}`);
  made.push(ctlName);
  const ctl = postgres(url(ctlName), { max: 1, onnotice: () => {} });
  const walinspect = await ctl`create extension if not exists pg_walinspect`.then(
    () => true,
    () => false,
  );
  return {
    url,
    async create(suffix) {
      const name = `${run}_${suffix}`;
      await admin.unsafe(`create database ${name}`);
      made.push(name);
      return name;
    },
    backendPids: async (db) =>
      (await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${db}`).map((r) => r.pid),
    insertLsn: async () => (await admin<{ l: string }[]>`select pg_current_wal_insert_lsn()::text as l`)[0]!.l,
    async wal(db, from, to) {
      if (!walinspect) return null;
      const [{ oid } = { oid: 0 }] = await admin<
        { oid: number }[]
      >`select oid::int as oid from pg_database where datname = ${db}`;
      // Records are readable once flushed: the WAL writer does that within its delay (200 ms).
      await new Promise((r) => setTimeout(r, 400));
      const share = await walShareOf(ctl, oid, from, to);
      return share && { bytes: share.bytes, commits: share.commitRecords };
    },
    async close() {
      await ctl.end({ timeout: 2 }).catch(() => {});
      for (const d of made) await admin.unsafe(`drop database if exists ${d} with (force)`).catch(() => {});
      await admin.end({ timeout: 2 });
    },
  };
}
