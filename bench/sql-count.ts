import type { Sql } from "../storage/db";

/**
 * Counts what a client sends, by hooking postgres.js's `debug` option (called once per
 * statement sent, BEGIN and COMMIT included) — pg_stat_statements is not loaded on the
 * servers we measure on, and PGlite has none. The hook is switched on only while counting:
 * postgres.js reads `options.debug` on every send, so no client has to be rebuilt.
 */
export interface SqlCounts {
  statements: number;
  transactions: number;
  /** Single statements outside a transaction block (each its own implicit transaction). */
  autocommitReads: number;
  autocommitWrites: number;
  /** Transactions (explicit or implicit) that wrote something. */
  writingCommits: number;
  /** Writing commits that asked for synchronous_commit = off: no WAL flush is awaited. */
  asyncCommits: number;
  rollbacks: number;
}

const WRITE = /\b(insert\s+into|update\s+\w+\s+set|delete\s+from|merge\s+into)\b/i;

export class SqlCounter {
  private counts: SqlCounts = SqlCounter.zero();
  private open = new Map<number, { writes: boolean; async: boolean }>();

  static zero(): SqlCounts {
    return {
      statements: 0,
      transactions: 0,
      autocommitReads: 0,
      autocommitWrites: 0,
      writingCommits: 0,
      asyncCommits: 0,
      rollbacks: 0,
    };
  }

  private readonly hook = (conn: number, query: string) => {
    const q = query.trimStart().slice(0, 4000);
    const head = q.slice(0, 16).toLowerCase();
    const c = this.counts;
    c.statements++;
    if (head.startsWith("begin")) {
      this.open.set(conn, { writes: false, async: false });
      return;
    }
    const tx = this.open.get(conn);
    const isAsync = /synchronous_commit/i.test(q) && /off|local/i.test(q);
    if (head.startsWith("commit") || head.startsWith("rollback")) {
      this.open.delete(conn);
      c.transactions++;
      if (head.startsWith("rollback")) c.rollbacks++;
      else if (tx?.writes) {
        c.writingCommits++;
        if (tx.async) c.asyncCommits++;
      }
      return;
    }
    const writes = WRITE.test(q);
    if (tx) {
      tx.writes ||= writes;
      tx.async ||= isAsync;
      return;
    }
    c.transactions++;
    if (writes) {
      c.autocommitWrites++;
      c.writingCommits++;
      if (isAsync) c.asyncCommits++;
    } else c.autocommitReads++;
  };

  attach(sql: Sql): void {
    (sql.options as { debug: unknown }).debug = this.hook;
  }

  detach(sql: Sql): void {
    (sql.options as { debug: unknown }).debug = false;
  }

  reset(): void {
    this.counts = SqlCounter.zero();
    this.open.clear();
  }

  snapshot(): SqlCounts {
    return { ...this.counts };
  }
}

export function perTurn(c: SqlCounts, turns: number): Record<keyof SqlCounts, number> {
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v / turns])) as Record<keyof SqlCounts, number>;
}

/**
 * The database's committed transactions so far (pg_stat_database.xact_commit, PostgreSQL only),
 * read afresh: the session's cached statistics snapshot is cleared first, or two reads would agree.
 */
export async function committedTransactions(stats: Sql): Promise<number> {
  await stats`select pg_stat_clear_snapshot()`;
  const [r] = await stats<
    [{ n: bigint | number }]
  >`select xact_commit as n from pg_stat_database where datname = current_database()`;
  return Number(r.n);
}
