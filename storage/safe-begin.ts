import type postgres from "postgres";
import { withinDeadline } from "./deadline";

type AnySql = postgres.Sql<Record<string, unknown>>;
type Reserved = postgres.ReservedSql<Record<string, unknown>>;

const CONNECTION_LOST = new Set(["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED"]);

/**
 * Replaces `sql.begin` with one that runs the transaction on a reserved connection.
 *
 * postgres.js 3.4.9 can write a transaction's BEGIN without reserving its connection when
 * the connection's pipeline is full or its socket pushes back (porsager/postgres#1189, #823,
 * #1204; fixes open, not released). Measured here: under 64 concurrent turns on PGlite's single
 * connection the process died of a TypeError inside the driver; with a pool the upstream
 * reports show UNSAFE_TRANSACTION or, worse, other queries running inside the open
 * transaction. `sql.reserve()` takes an idle connection for itself first and never
 * pipelines BEGIN behind another session's queries, so that path is not reachable. Same call forms
 * (`begin(fn)`, `begin(mode, fn)`), same semantics: commit when `fn` resolves, rollback
 * when it throws, savepoints as `tx.savepoint(fn)`.
 */
export function installSafeBegin(sql: AnySql): void {
  const begin = (a: unknown, b?: unknown): Promise<unknown> => {
    const [mode, fn] = typeof a === "function" ? ["", a] : [String(a ?? ""), b];
    return transaction(mode, fn as (tx: Reserved) => unknown, null);
  };
  /**
   * `late` is set when the caller stopped waiting (its deadline passed): a connection reserved
   * after that is released unused, and a transaction whose body ends after it rolls back instead
   * of committing — its caller was already told it failed.
   */
  const transaction = async (mode: string, fn: (tx: Reserved) => unknown, late: { set: boolean } | null) => {
    const conn = await sql.reserve();
    if (late?.set) {
      conn.release();
      throw new Error("transaction abandoned: its deadline passed while it waited for a connection");
    }
    let lost = false;
    try {
      // BEGIN is not waited for: the transaction's first statements follow it on the same
      // reserved connection, in order, and leave in the same socket write — one round trip
      // less per transaction. Its outcome is checked before COMMIT.
      const began = conn.unsafe(`begin ${mode.replace(/[^a-z ]/gi, "")}`);
      began.catch(() => {});
      const tx = withSavepoints(conn);
      try {
        const out = await (fn as (tx: Reserved) => unknown)(tx);
        const result = Array.isArray(out) ? await Promise.all(out) : out;
        await began;
        if (late?.set) throw new Error("transaction abandoned: its deadline passed before its commit");
        await conn.unsafe("commit");
        return result;
      } catch (e) {
        lost = CONNECTION_LOST.has((e as { code?: string }).code ?? "");
        // A dead connection is not written to again (a write there throws outside any promise, #1208).
        if (!lost) await conn.unsafe("rollback").catch(() => {});
        throw e;
      }
    } finally {
      conn.release();
    }
  };
  (sql as unknown as { begin: typeof begin }).begin = begin;
  bounded.set(sql, (ms, what, fn) => {
    const late = { set: false };
    return withinDeadline(ms, what, transaction("", fn, late), () => (late.set = true));
  });
}

type BoundedBegin = (ms: number, what: string, fn: (tx: Reserved) => unknown) => Promise<unknown>;
const bounded = new WeakMap<object, BoundedBegin>();

/**
 * `sql.begin(fn)` that waits at most `ms` (issue 47: every wait on the database is bounded):
 * past it the caller gets StorageDeadlineError, and the transaction, whenever its connection
 * or its body comes back, rolls back instead of committing. On a pool without installSafeBegin
 * (a transaction's own handle) only the wait is bounded.
 */
export function beginWithin<T>(
  sql: postgres.Sql | postgres.TransactionSql,
  ms: number,
  what: string,
  fn: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
  const b = bounded.get(sql);
  if (b) return b(ms, what, fn as never) as Promise<T>;
  if ("begin" in sql) return withinDeadline(ms, what, (sql as postgres.Sql).begin(fn) as Promise<T>);
  return withinDeadline(ms, what, fn(sql));
}

function withSavepoints(conn: Reserved): Reserved {
  let n = 0;
  const savepoint = async (a: unknown, b?: unknown): Promise<unknown> => {
    const fn = (typeof a === "function" ? a : b) as (tx: Reserved) => unknown;
    const name = `s${n++}`;
    await conn.unsafe(`savepoint ${name}`);
    try {
      const out = await fn(conn);
      await conn.unsafe(`release savepoint ${name}`);
      return out;
    } catch (e) {
      await conn.unsafe(`rollback to savepoint ${name}`).catch(() => {});
      throw e;
    }
  };
  return Object.assign(conn, { savepoint });
}
