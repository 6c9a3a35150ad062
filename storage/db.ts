import postgres from "postgres";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { acquireDataDirLock } from "./data-dir-lock";
import { clusterExists, initClusterOutOfProcess, pgliteStartParams } from "./pglite-start";
import { readMigrations, runMigrations } from "./migrate";
import { installSafeBegin } from "./safe-begin";

export type Sql = postgres.Sql;
/** A transaction handle; repositories accept either this or the pool (`Sql`). */
export type Tx = postgres.TransactionSql | postgres.Sql;

export interface Database {
  sql: Sql;
  backend: "postgres" | "pglite";
  /** Where the embedded database lives (`memory://` for a throw-away one); undefined on a server. */
  dataDir?: string;
  /**
   * True when this open created the schema from nothing (every migration applied now): a fresh
   * data directory or an empty server database. The composition root loads demo data only then.
   */
  fresh?: boolean;
  close(): Promise<void>;
}

export interface OpenOptions {
  url?: string;
  dataDir?: string;
  migrate?: boolean;
  /** Pool size on a real server; PGlite is always one connection. */
  max?: number;
  /** Told each slow step (initdb, each migration) as it starts: main.ts shows it as a progress line. */
  onProgress?: (step: string) => void;
  /** How long opening a connection to the server may take (postgres.js's default: 30 s). */
  connectTimeoutMs?: number;
}

/**
 * Reconnecting to a server that went away (issue 47). postgres.js's own back-off grows to 20 s
 * between attempts, and a statement waits in the queue for the next one: requests hung for
 * 8–20 s into an outage instead of failing. At most 1 s between attempts, and a connect bounded
 * by `connectTimeoutMs`: a request's statement fails within about that, and the HTTP edge
 * answers 503 storage_unavailable; attempts are made only while statements wait.
 */
export const reconnectBackoffS = (retries: number) => Math.min(0.1 * 2 ** retries, 1);
export const CONNECT_TIMEOUT_MS = 5_000;

// Numeric, bigint and jsonb come back as JS values; silence NOTICEs (e.g. "already exists").
const common = { onnotice: () => {}, types: { bigint: postgres.BigInt } } as const;

export async function openDatabase(opts: OpenOptions = {}): Promise<Database> {
  const progress = opts.onProgress ?? (() => {});
  const db = opts.url
    ? openServer(opts.url, opts.max ?? 10, opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS)
    : await openEmbedded(opts.dataDir ?? "./.data", progress);
  if (opts.migrate !== false) {
    try {
      const files = readMigrations();
      const applied = await runMigrations(db.sql, undefined, progress);
      db.fresh = files.length > 0 && applied.length === files.length;
    } catch (e) {
      await db.close();
      throw e;
    }
  }
  return db;
}

function openServer(url: string, max: number, connectTimeoutMs: number): Database {
  const sql = postgres(url, {
    ...common,
    max,
    connect_timeout: Math.max(1, Math.ceil(connectTimeoutMs / 1000)),
    backoff: reconnectBackoffS,
    connection: { application_name: "dialogue-statecharts" },
  });
  installSafeBegin(sql as never);
  return { sql, backend: "postgres", close: () => sql.end({ timeout: 5 }) };
}

/**
 * PGlite behind pglite-socket so the whole code base has one SQL path (postgres.js).
 * Measured: only a single client connection is safe — a larger pool hangs, and
 * connections would share one backend session anyway.
 */
async function openEmbedded(dataDir: string, progress: (step: string) => void): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  const memory = dataDir === "memory://" || dataDir.startsWith("memory://");
  let pgDir: string | undefined;
  // Before PGlite touches the folder: a second process must not open it at all.
  progress(memory ? "starting the embedded database (in memory)" : `opening the embedded database in ${dataDir}`);
  const lock = memory ? null : await acquireDataDirLock(dataDir);
  if (!memory) {
    pgDir = resolve(dataDir, "pgdata");
    mkdirSync(pgDir, { recursive: true });
  }
  let pglite: Awaited<ReturnType<typeof PGlite.create>>;
  try {
    if (memory) pglite = await PGlite.create();
    else {
      // First start: initdb in a child process, so its memory never lands in this one (storage/pglite-start.ts).
      if (!clusterExists(pgDir!))
        progress(`initialising a new embedded database in ${dataDir} (first start, about half a minute)`);
      await initClusterOutOfProcess(pgDir!);
      progress("starting the embedded database");
      pglite = await PGlite.create({ dataDir: pgDir, startParams: pgliteStartParams(PGlite.defaultStartParams) });
    }
  } catch (e) {
    lock?.release();
    throw e;
  }
  const sockDir = mkdtempSync(join(tmpdir(), "pglite-sock-"));
  const socketPath = join(sockDir, ".s.PGSQL.5432");
  const server = new PGLiteSocketServer({ db: pglite, path: socketPath, maxConnections: 4 });
  await server.start();
  const sql = postgres({
    ...common,
    path: socketPath,
    username: "postgres",
    database: "postgres",
    max: 1,
    // Statement caching works over the socket and saves a parse per query.
    prepare: true,
  });
  installSafeBegin(sql as never);
  let closed = false;
  return {
    sql,
    backend: "pglite",
    dataDir,
    async close() {
      if (closed) return;
      closed = true;
      await sql.end({ timeout: 2 }).catch(() => {});
      await server.stop().catch(() => {});
      await pglite.close().catch(() => {});
      rmSync(sockDir, { recursive: true, force: true });
      lock?.release();
    },
  };
}
