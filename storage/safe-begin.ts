import type postgres from "postgres";

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
  const begin = async (a: unknown, b?: unknown): Promise<unknown> => {
    const [mode, fn] = typeof a === "function" ? ["", a] : [String(a ?? ""), b];
    const conn = await sql.reserve();
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
