import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll } from "vitest";
import { openDatabase, type Database, type Sql } from "../../storage/db";
import { migrationDirs, readMigrations, runMigrations } from "../../storage/migrate";

/** The backend a test run targets: the PostgreSQL server when DATABASE_URL is set, else embedded PGlite. */
export const serverUrl = process.env.DATABASE_URL;
export const onServer = !!serverUrl;

/**
 * A fresh database per test file: on the server a uniquely named database (files run in
 * parallel and must not see each other's rows), else an in-memory PGlite. Migrations applied.
 */
export async function createTestDatabase(
  o: { migrate?: boolean } = {},
): Promise<{ db: Database; url?: string; drop(): Promise<void> }> {
  if (!serverUrl) {
    const db = await openDatabase({ dataDir: "memory://", migrate: o.migrate });
    return { db, drop: () => db.close() };
  }
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString(), max: 8, migrate: o.migrate });
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end({ timeout: 2 });
    },
  };
}

/**
 * Applies every migration numbered below `id` (from a folder of copies), for a test of migration
 * `id` on a database created with `migrate: false` that then stores rows the old way.
 */
export async function migrateBefore(sql: Sql, id: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `migrations-before-${id}-`));
  for (const f of readMigrations(migrationDirs()).filter((f) => f.id < id)) writeFileSync(join(dir, f.name), f.body);
  await runMigrations(sql, dir);
}

/** Vitest hook pair: `const t = useTestDatabase(); … t.db.sql` (`migrate: false`: an empty database, for a migration's test). */
export function useTestDatabase(o: { migrate?: boolean } = {}): {
  readonly db: Database;
  readonly url: string | undefined;
} {
  let handle: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  beforeAll(async () => {
    handle = await createTestDatabase(o);
  });
  afterAll(async () => {
    await handle?.drop();
  });
  return {
    get db() {
      if (!handle) throw new Error("test database not ready (use inside tests)");
      return handle.db;
    },
    get url() {
      return handle?.url;
    },
  };
}
