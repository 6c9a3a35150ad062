import { describe, expect, it } from "vitest";
import postgres from "postgres";
import { loadConfig } from "../../http/config";
import { onServer, serverUrl } from "../utils/db";
import { useTestServer } from "../utils/server";

const t = useTestServer({ serve: false });

describe("DATABASE_POOL_MAX", () => {
  it("defaults to 10 connections, takes 1–500, refuses anything else", () => {
    expect(loadConfig({}).databasePoolMax).toBe(10);
    expect(loadConfig({ DATABASE_POOL_MAX: "32" }).databasePoolMax).toBe(32);
    for (const bad of ["0", "501", "many", "2.5"])
      expect(() => loadConfig({ DATABASE_POOL_MAX: bad })).toThrow(/DATABASE_POOL_MAX/);
  });

  it.runIf(onServer)("a server process opens at most that many connections, however many requests wait", async () => {
    // The file's own pool closed: every connection to its database is then the server's.
    await t.db.close();
    const name = new URL(t.dbUrl!).pathname.slice(1);
    const started = await t.start({ poolFromConfig: true, env: { DATABASE_POOL_MAX: "2" } });
    const admin = postgres(serverUrl!, { max: 1, onnotice: () => {} });
    try {
      const created = await Promise.all(
        Array.from({ length: 12 }, () =>
          fetch(`${started.url}/v1/clinic/threads`, { method: "POST", body: "{}" }).then((r) => r.status),
        ),
      );
      expect(created).toEqual(Array(12).fill(201));
      const [row] = await admin<
        { n: number }[]
      >`select count(*)::int as n from pg_stat_activity where datname = ${name}`;
      const n = row!.n;
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(2);
    } finally {
      await admin.end();
      await started.stop();
    }
  });
});
