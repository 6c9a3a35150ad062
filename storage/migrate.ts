import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type postgres from "postgres";

type Sql = postgres.Sql;

export const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), "migrations");
const systemsDir = join(dirname(fileURLToPath(import.meta.url)), "..", "systems");

/**
 * Shared tables live in `storage/migrations`; each dialogue system owns `systems/<name>/migrations`.
 * Found by that convention rather than imported, so storage never depends on a system. One number
 * sequence spans all folders (a repeated number is an error), applied in number order.
 */
export function migrationDirs(): string[] {
  const systems = existsSync(systemsDir)
    ? readdirSync(systemsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(systemsDir, d.name, "migrations")))
        .map((d) => join(systemsDir, d.name, "migrations"))
        .sort()
    : [];
  return [migrationsDir, ...systems];
}

export interface MigrationFile {
  id: number;
  name: string;
  sha256: string;
  body: string;
}

export function readMigrations(dirs: string | string[] = migrationDirs()): MigrationFile[] {
  const files = (typeof dirs === "string" ? [dirs] : dirs).flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => /^\d{6}_[\w-]+\.sql$/.test(f))
      .map((name) => {
        const body = readFileSync(join(dir, name), "utf8");
        return { id: Number(name.slice(0, 6)), name, body, sha256: createHash("sha256").update(body).digest("hex") };
      }),
  );
  files.sort((a, b) => a.id - b.id);
  for (let i = 1; i < files.length; i++) {
    if (files[i]!.id === files[i - 1]!.id)
      throw new Error(`Two migrations share number ${files[i]!.id}: ${files[i - 1]!.name} and ${files[i]!.name}`);
  }
  return files;
}

export class MigrationChangedError extends Error {
  constructor(readonly file: string) {
    super(
      `Migration ${file} was already applied to this database but its file has changed since. ` +
        `Migrations are append-only: restore the original file and put the change in a new numbered migration.`,
    );
  }
}

/**
 * Applies numbered migrations in order, each in its own transaction, and records
 * their checksum. An advisory lock keeps two processes starting together from racing.
 */
export async function runMigrations(
  sql: Sql,
  dirs: string | string[] = migrationDirs(),
  /** Told before each migration that is applied now ("applying migration 3/40: …"). */
  onProgress?: (step: string) => void,
): Promise<string[]> {
  const files = readMigrations(dirs);
  const applied: string[] = [];
  await sql.reserve().then(async (conn) => {
    try {
      await conn`select pg_advisory_lock(7262001)`;
      await conn`create table if not exists schema_migrations (
        id integer primary key, name text not null, sha256 text not null, applied_at timestamptz not null default now())`;
      const done = new Map(
        (
          await conn<{ id: number; name: string; sha256: string }[]>`select id, name, sha256 from schema_migrations`
        ).map((r) => [r.id, r]),
      );
      for (const [i, f] of files.entries()) {
        const prior = done.get(f.id);
        if (prior) {
          if (prior.sha256 !== f.sha256) throw new MigrationChangedError(f.name);
          continue;
        }
        onProgress?.(`applying migration ${i + 1}/${files.length}: ${f.name}`);
        await conn.unsafe("begin");
        try {
          await conn.unsafe(f.body);
          await conn`insert into schema_migrations (id, name, sha256) values (${f.id}, ${f.name}, ${f.sha256})`;
          await conn.unsafe("commit");
        } catch (e) {
          await conn.unsafe("rollback");
          throw new Error(`Migration ${f.name} failed: ${(e as Error).message}`);
        }
        applied.push(f.name);
      }
    } finally {
      await conn`select pg_advisory_unlock(7262001)`.catch(() => {});
      conn.release();
    }
  });
  return applied;
}
