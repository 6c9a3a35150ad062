import { spawnSync } from "node:child_process";
import postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { installSafeBegin } from "../../storage/safe-begin";
import { onServer, useTestDatabase } from "../utils/db";

/**
 * Transactions run on a reserved connection (storage/safe-begin.ts), because postgres.js
 * 3.4.9 can send BEGIN without reserving the connection under a full pipeline or socket
 * back-pressure (porsager/postgres#1189).
 */
const t = useTestDatabase();

beforeAll(async () => {
  await t.db.sql`create table if not exists tx_probe (k text not null, payload text not null)`;
});

describe("transactions on a reserved connection", () => {
  it.runIf(onServer)("where the upstream begin fails (no pipelining at all), the reserved one commits", async () => {
    const raw = postgres(t.url!, { max: 2, max_pipeline: 0, onnotice: () => {} } as postgres.Options<{}>);
    try {
      await expect(raw.begin((tx) => tx`select 1`)).rejects.toMatchObject({ code: "UNSAFE_TRANSACTION" });
      installSafeBegin(raw as never);
      const [row] = await raw.begin((tx) => tx<{ one: number }[]>`select 1 as one`);
      expect(row).toEqual({ one: 1 });
    } finally {
      await raw.end({ timeout: 2 });
    }
  });

  it("a transaction started with the connection's pipeline exactly full succeeds (upstream: an uncaught TypeError kills the process)", async () => {
    const child = spawnSync(
      process.execPath,
      ["--import", "tsx", "test/storage/fixtures/begin-at-pipeline-boundary.ts"],
      {
        cwd: process.cwd(),
        env: { ...process.env, ...(t.url ? { DATABASE_URL: t.url } : {}) },
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(`${child.stdout}${child.stderr}`.trim().split("\n").at(-1)).toBe("ok");
    expect(child.status).toBe(0);
  }, 90_000);

  it("commits, rolls back on a throw, and supports savepoints", async () => {
    await t.db.sql.begin(async (tx) => {
      await tx`insert into tx_probe (k, payload) values ('commit', 'a')`;
    });
    await expect(
      t.db.sql.begin(async (tx) => {
        await tx`insert into tx_probe (k, payload) values ('rollback', 'b')`;
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    await t.db.sql.begin(async (tx) => {
      await tx`insert into tx_probe (k, payload) values ('outer', 'c')`;
      await (tx as unknown as { savepoint(fn: (s: typeof tx) => Promise<unknown>): Promise<unknown> })
        .savepoint(async (s) => {
          await s`insert into tx_probe (k, payload) values ('inner', 'd')`;
          throw new Error("inner");
        })
        .catch(() => {});
    });
    const rows = await t.db.sql<
      { k: string }[]
    >`select k from tx_probe where k in ('commit', 'rollback', 'outer', 'inner') order by k`;
    expect(rows.map((r) => r.k)).toEqual(["commit", "outer"]);
  });

  it("200 concurrent transactions with large rows, among plain queries: all commit, none sees another's uncommitted rows", async () => {
    const big = "ж".repeat(6_000);
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        if (i % 2) return t.db.sql`select count(*)::int as n from tx_probe`.then(() => 0);
        return t.db.sql.begin(async (tx) => {
          await tx`insert into tx_probe (k, payload) values (${`load-${i}`}, ${big}), (${`load-${i}`}, ${big})`;
          const [mine] = await tx<{ n: number }[]>`select count(*)::int as n from tx_probe where k like 'load-%'`;
          return mine!.n;
        });
      }),
    );
    const [done] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from tx_probe where k like 'load-%'`;
    expect(done!.n).toBe(200);
    // Inside each transaction: its own two rows plus only committed ones, so an even count.
    for (const n of results.filter((_, i) => i % 2 === 0)) expect(n % 2).toBe(0);
  }, 60_000);
});
