import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MigrationChangedError, migrationDirs, readMigrations, runMigrations } from "../../storage/migrate";
import { useTestDatabase } from "../utils/db";

const t = useTestDatabase();

describe("migrations", () => {
  it("are numbered, applied in order and recorded with their checksum", async () => {
    const files = readMigrations();
    expect(files.map((f) => f.id)).toEqual([...files.map((f) => f.id)].sort((a, b) => a - b));
    expect(files[0]!.name).toBe("000001_conversations.sql");
    const rows = await t.db.sql<{ id: number; sha256: string }[]>`select id, sha256 from schema_migrations order by id`;
    expect(rows.map((r) => r.id)).toEqual(files.map((f) => f.id));
    expect(rows.map((r) => r.sha256)).toEqual(files.map((f) => f.sha256));
  });

  it("finds the shared folder and every system's own folder, numbers unique across them", () => {
    const dirs = migrationDirs();
    expect(dirs.map((d) => d.split("/").slice(-3).join("/"))).toEqual(
      expect.arrayContaining([
        "systems/clinic/migrations",
        "systems/evidence/migrations",
        "systems/workbench/migrations",
      ]),
    );
    const ids = readMigrations().map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it("refuses two migrations with one number in different folders", () => {
    const a = mkdtempSync(join(tmpdir(), "migrations-a-"));
    const b = mkdtempSync(join(tmpdir(), "migrations-b-"));
    writeFileSync(join(a, "000100_one.sql"), "select 1;");
    writeFileSync(join(b, "000100_two.sql"), "select 2;");
    expect(() => readMigrations([a, b])).toThrow(/share number 100/);
  });

  it("a second run applies nothing", async () => {
    expect(await runMigrations(t.db.sql)).toEqual([]);
  });

  it("start-up refuses when an applied migration's file has changed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "migrations-"));
    for (const d of migrationDirs()) cpSync(d, dir, { recursive: true });
    writeFileSync(
      join(dir, "000001_conversations.sql"),
      "-- edited after it was applied\n" + readMigrations()[0]!.body,
    );
    const err = await runMigrations(t.db.sql, dir).catch((e) => e);
    expect(err).toBeInstanceOf(MigrationChangedError);
    expect(err.message).toMatch(/000001_conversations\.sql.*changed/);
  });

  it("applies a new migration appended after the existing ones", async () => {
    const dir = mkdtempSync(join(tmpdir(), "migrations-"));
    for (const d of migrationDirs()) cpSync(d, dir, { recursive: true });
    writeFileSync(join(dir, "999999_probe.sql"), "create table probe_table (id int primary key);");
    expect(await runMigrations(t.db.sql, dir)).toEqual(["999999_probe.sql"]);
    const [row] = await t.db.sql`select count(*)::int as n from probe_table`;
    expect(row).toEqual({ n: 0 });
    await t.db.sql`drop table probe_table`;
    await t.db.sql`delete from schema_migrations where id = 999999`;
  });
});
