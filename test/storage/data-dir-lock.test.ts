import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  DataDirLocked,
  LEASE_MS,
  LOCK_FILE,
  lockDataDir,
  processStateOf,
  startTimeOf,
} from "../../storage/data-dir-lock";
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

  it("a reused pid is not the holder: identity is the pid with its start time, boot id and pid namespace", () => {
    const dir = scratch();
    const path = join(dir, LOCK_FILE);
    const me = {
      host: hostname(),
      since: "",
      bootId: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
      pidNs: readlinkSync("/proc/self/ns/pid"),
    };
    // an earlier process that had our pid (a restarted container is pid 1 again)
    writeFileSync(path, JSON.stringify({ ...me, pid: process.pid, startTime: "1" }));
    lockDataDir(dir).release();
    // a live pid that now belongs to another process
    writeFileSync(path, JSON.stringify({ ...me, pid: process.ppid, startTime: "1" }));
    lockDataDir(dir).release();
    // the same live process: refused
    writeFileSync(path, JSON.stringify({ ...me, pid: process.ppid, startTime: startTimeOf(process.ppid) }));
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`pid ${process.ppid}`));
    // a lock from before a reboot
    writeFileSync(
      path,
      JSON.stringify({ ...me, bootId: "another-boot", pid: process.ppid, startTime: startTimeOf(process.ppid) }),
    );
    lockDataDir(dir).release();
  });

  it("a zombie holder is dead: killed, not yet reaped by its parent, it still answers kill(pid, 0)", async () => {
    // `sh` starts a short child in the background, then becomes `sleep`, which never reaps it:
    // once the child exits it stays a zombie for as long as the sleep runs.
    const parent = spawn("sh", ["-c", "sleep 0.05 & exec sleep 30"], { stdio: "ignore" });
    try {
      let zombie: number | null = null;
      for (let i = 0; i < 100 && zombie === null; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const children = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, "utf8").trim();
        const pid = Number(children.split(" ")[0]);
        if (pid && processStateOf(pid) === "Z") zombie = pid;
      }
      expect(zombie).not.toBeNull();
      expect(() => process.kill(zombie!, 0)).not.toThrow(); // what the pid check alone saw
      const dir = scratch();
      const me = {
        host: hostname(),
        since: "",
        bootId: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
        pidNs: readlinkSync("/proc/self/ns/pid"),
      };
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ ...me, pid: zombie, startTime: startTimeOf(zombie!) }));
      const lock = lockDataDir(dir);
      expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")).pid).toBe(process.pid);
      lock.release();
      // A live holder (the sleeping parent) is still refused.
      writeFileSync(
        join(dir, LOCK_FILE),
        JSON.stringify({ ...me, pid: parent.pid, startTime: startTimeOf(parent.pid!) }),
      );
      expect(processStateOf(parent.pid!)).toMatch(/^[RSD]$/);
      expect(() => lockDataDir(dir)).toThrow(new RegExp(`pid ${parent.pid}`));
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("a holder in another pid namespace holds a lease: refused while it is fresh, taken once it runs out", () => {
    const dir = scratch();
    const path = join(dir, LOCK_FILE);
    const other = {
      pid: 1,
      host: hostname(),
      since: "",
      bootId: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
      pidNs: "pid:[1]",
      startTime: "5",
    };
    writeFileSync(path, JSON.stringify(other));
    let refused: unknown;
    try {
      lockDataDir(dir);
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(DataDirLocked);
    expect((refused as DataDirLocked).retryAfterMs).toBeGreaterThan(0);
    const past = new Date(Date.now() - LEASE_MS - 1_000);
    utimesSync(path, past, past);
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
