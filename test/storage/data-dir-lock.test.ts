import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirLocked, LOCK_FILE, lockDataDir } from "../../storage/data-dir-lock";
import { openDatabase } from "../../storage/db";

const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), "lock-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A pid that was alive a moment ago and is not now. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;

describe("DATA_DIR lock", () => {
  it("refuses a second holder while the first lives, and is free again after release", () => {
    const dir = scratch();
    const lock = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirLocked);
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    lockDataDir(dir).release();
  });

  it("takes over a lock whose pid is dead on this host; keeps one from another host or a live pid", () => {
    const dir = scratch();
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname(), since: "" }));
    lockDataDir(dir).release();
    writeFileSync(path, JSON.stringify({ pid: deadPid(), host: "another-host", since: "" }));
    expect(() => lockDataDir(dir)).toThrow(/in use by another server process/);
    writeFileSync(path, JSON.stringify({ pid: process.ppid, host: hostname(), since: "" }));
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`pid ${process.ppid}`));
    writeFileSync(path, "not json");
    lockDataDir(dir).release();
  });

  it("openDatabase on a folder already open refuses before PGlite touches it", async () => {
    const dir = scratch();
    const db = await openDatabase({ dataDir: dir, migrate: false });
    try {
      await expect(openDatabase({ dataDir: dir, migrate: false })).rejects.toThrow(DataDirLocked);
      expect((await db.sql`select 1 as one`)[0]).toEqual({ one: 1 });
    } finally {
      await db.close();
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  }, 120_000); // a file-backed PGlite boots in seconds, far longer on a loaded machine
});
