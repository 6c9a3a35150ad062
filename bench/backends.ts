import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openDatabase, type Database } from "../storage/db";
import { sleep } from "./stats";

/**
 * The two backends every benchmark runs on: embedded PGlite (file-backed in a temporary
 * folder, as `npm start` runs it) and a scratch database on the PostgreSQL server, created
 * for this run and dropped after it.
 */
export interface Backend {
  name: "pglite" | "postgres";
  db: Database;
  /** Server only: counters of the scratch database, read from another database. */
  counters(): Promise<DbCounters | null>;
  /** Server only: WAL records of this database between two LSNs (pg_walinspect). */
  wal(from: string, to: string): Promise<WalShare | null>;
  close(): Promise<void>;
}

export interface DbCounters {
  xactCommit: number;
  /** Transactions the reading itself added to xactCommit (subtract from a later reading's delta). */
  overhead: number;
  lsn: string;
}

export interface WalShare {
  bytes: number;
  commitRecords: number;
}

export const defaultServerUrl = "postgres://postgres@127.0.0.1:5432/test";

/** The PostgreSQL server the benchmarks make their scratch databases on. */
export const benchServerUrl = (): string =>
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? defaultServerUrl;

export const adminConnection = (serverUrl: string): postgres.Sql => postgres(serverUrl, { max: 1, onnotice: () => {} });

export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * A database made for one run on the server `admin` is connected to. Named `bench_<ms, base 36>_…`
 * in every benchmark, so that `openPostgres` sweeps away those of runs that died before dropping them.
 */
export async function createScratchDatabase(admin: postgres.Sql, serverUrl: string): Promise<ScratchDatabase> {
  const name = `bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () =>
      admin.unsafe(`drop database if exists ${name} with (force)`).then(
        () => {},
        () => {},
      ),
  };
}

/**
 * The environment of a server process a benchmark starts on `backend`: the parent's, without API
 * tokens, on a data folder of its own (PGlite) or a scratch database (PostgreSQL); `close` drops
 * both.
 */
export async function childServerEnv(
  backend: string,
  logLevel: string,
): Promise<{ env: Record<string, string>; dbUrl: string | null; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-server-"));
  const scratch = backend === "postgres" ? await openScratchDatabase() : null;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: dataDir,
    API_TOKENS: "",
    LOG_LEVEL: logLevel,
  };
  if (scratch) env.DATABASE_URL = scratch.url;
  else delete env.DATABASE_URL;
  return {
    env,
    dbUrl: scratch?.url ?? null,
    async close() {
      await scratch?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A scratch database with an admin connection of its own; `close` drops it and ends that connection. */
export async function openScratchDatabase(
  serverUrl = benchServerUrl(),
): Promise<Omit<ScratchDatabase, "drop"> & { close(): Promise<void> }> {
  const admin = adminConnection(serverUrl);
  const { name, url, drop } = await createScratchDatabase(admin, serverUrl);
  return {
    name,
    url,
    async close() {
      await drop();
      await admin.end({ timeout: 2 });
    },
  };
}

/**
 * The WAL one database wrote between two LSNs (pg_walinspect, through `sql`, a connection where the
 * extension exists): the bytes of records touching its files (oid) or of transactions that did, and
 * those transactions' commit records. A busy server (other databases' traffic) may recycle the
 * window's segments before they are read (58P01): the figure is then unknown (null, "n/a" in a
 * report), not a failed benchmark.
 */
export async function walShareOf(sql: postgres.Sql, oid: number, from: string, to: string): Promise<WalShare | null> {
  const pattern = `%/${oid}/%`;
  const rows = await sql<{ bytes: string | null; commits: string }[]>`
    with r as (select xid, resource_manager, record_type, record_length, block_ref from pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn)),
         mine as (select distinct xid from r where xid::text <> '0' and block_ref like ${pattern})
    select sum(record_length) filter (where block_ref like ${pattern} or xid in (select xid from mine))::text as bytes,
           count(*) filter (where resource_manager = 'Transaction' and record_type like 'COMMIT%' and xid in (select xid from mine))::text as commits
    from r`.catch((e: { code?: string }) => {
    if (e.code === "58P01") return null;
    throw e;
  });
  if (!rows) return null;
  return { bytes: Number(rows[0]?.bytes ?? 0), commitRecords: Number(rows[0]?.commits ?? 0) };
}

export async function openPglite(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), "bench-pglite-"));
  const db = await openDatabase({ dataDir: dir });
  return {
    name: "pglite",
    db,
    counters: async () => null,
    wal: async () => null,
    async close() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function openPostgres(serverUrl = benchServerUrl(), max = 10): Promise<Backend> {
  const admin = adminConnection(serverUrl);
  // Scratch databases of runs that died without cleaning up (their name starts with the time).
  for (const { datname } of await admin<
    { datname: string }[]
  >`select datname from pg_database where datname like 'bench\_%'`) {
    const born = Number.parseInt(datname.split("_")[1] ?? "", 36);
    if (Number.isFinite(born) && Date.now() - born > 3_600_000)
      await admin.unsafe(`drop database if exists ${datname} with (force)`).catch(() => {});
  }
  const { name, url, drop } = await createScratchDatabase(admin, serverUrl);
  const db = await openDatabase({ url, max });
  // A side connection into the scratch database for pg_walinspect, used only outside measured windows.
  const side = adminConnection(url);
  const walinspect = await side`create extension if not exists pg_walinspect`.then(
    () => true,
    () => false,
  );
  const [{ oid } = { oid: 0 }] = await admin<
    { oid: number }[]
  >`select oid::int as oid from pg_database where datname = ${name}`;
  return {
    name: "postgres",
    db,
    async counters() {
      // Backends publish their counters when idle, at most once a second, so a window's last
      // transactions may not be counted yet. Ask every pool connection to publish now: one
      // `select pg_stat_force_next_flush()` each (PostgreSQL 15+), counted and subtracted.
      let overhead = 0;
      const conns = await Promise.all(Array.from({ length: max }, () => db.sql.reserve()));
      try {
        await Promise.all(conns.map((c) => c`select pg_stat_force_next_flush()`));
        overhead = conns.length;
      } catch {
        await sleep(1_100);
      } finally {
        for (const c of conns) c.release();
      }
      let prev = -1;
      for (let i = 0; i < 10; i++) {
        await sleep(150);
        const [r] = await admin<
          { xact_commit: string }[]
        >`select xact_commit::text from pg_stat_database where datname = ${name}`;
        const now = Number(r?.xact_commit ?? 0);
        if (now === prev) break;
        prev = now;
      }
      const [l] = await admin<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
      return { xactCommit: prev, overhead, lsn: l!.lsn };
    },
    async wal(from, to) {
      return walinspect ? walShareOf(side, oid, from, to) : null;
    },
    async close() {
      await side.end({ timeout: 2 }).catch(() => {});
      await db.close();
      await drop();
      await admin.end({ timeout: 2 });
    },
  };
}

/** Bytes between two LSNs ("16/B374D848"), cluster-wide: other databases' traffic is included. */
export function lsnDiff(from: string, to: string): number {
  const n = (l: string) => {
    const [hi = "0", lo = "0"] = l.split("/");
    return BigInt(`0x${hi}`) * 0x100000000n + BigInt(`0x${lo}`);
  };
  return Number(n(to) - n(from));
}
