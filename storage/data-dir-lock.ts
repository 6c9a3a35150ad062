import { randomUUID } from "node:crypto";
import {
  linkSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";

/**
 * One process per embedded DATA_DIR (issue 18 item 2). PGlite has no lock of its own: two
 * processes on one folder both start and then overwrite each other's pages (acknowledged turns
 * lost, messages without their conversation). The lock is a file put in place atomically that
 * names its holder by identity, not by pid alone (issue 35): a pid is reused — a container
 * restarted after kill -9 is pid 1 again, and its old lock named pid 1 — so the holder is its pid
 * with its process start time, the machine's boot id and its pid namespace. In its own namespace
 * a holder is alive only if a process with that pid and that start time runs; from another
 * namespace (another container on a shared volume, the same container restarted) its pid cannot
 * be looked up, so the holder keeps a lease: it touches the file every second, and a lease
 * untouched for LEASE_MS is dead.
 */
export const LOCK_FILE = "server.lock";
export const HEARTBEAT_MS = 1_000;
export const LEASE_MS = 3_000;

export class DataDirLocked extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    /** When the holder is in another pid namespace: how long until its lease runs out if it is dead. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another server process (pid ${pid}). Stop that process or choose another DATA_DIR; one embedded database serves one process.`,
    );
  }
}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

interface LockBody {
  pid: number;
  host: string;
  since: string;
  /** The kernel's boot id: a lock from before a reboot is dead whatever its pid. */
  bootId?: string | null;
  /** `pid:[4026531836]`: pids mean something only within one namespace. */
  pidNs?: string | null;
  /** The holder's start time in clock ticks since boot (/proc/<pid>/stat field 22). */
  startTime?: string | null;
}

const read = (path: string) => {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return null;
  }
};
const bootId = () => read("/proc/sys/kernel/random/boot_id");
const pidNs = () => {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
};
/** Field 22 of /proc/<pid>/stat; the command name (field 2) may hold spaces, so count after its ")". */
export function startTimeOf(pid: number | "self"): string | null {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return null;
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
}

/**
 * The process state letter of /proc/<pid>/stat (field 3): `R`, `S`, `D`, … for a process that
 * runs; `Z` for a zombie — it has exited and only waits for its parent to reap it — and `X` for
 * one being removed. Null when it cannot be read (no /proc, gone).
 */
export function processStateOf(pid: number): string | null {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return null;
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? null;
}

function alive(pid: number): boolean {
  // A zombie still answers kill(pid, 0) (issue 47: right after kill -9 the restarted server was
  // refused in 2 of 3 runs, its killed predecessor not yet reaped): it holds nothing any more.
  const state = processStateOf(pid);
  if (state === "Z" || state === "X" || state === "x") return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(path: string): LockBody | null {
  try {
    const body = JSON.parse(readFileSync(path, "utf8")) as Partial<LockBody>;
    return typeof body.pid === "number" ? (body as LockBody) : null;
  } catch {
    return null; // gone meanwhile, or half-written by an owner that died while writing it
  }
}

const identity = (): LockBody => ({
  pid: process.pid,
  host: hostname(),
  since: new Date().toISOString(),
  bootId: bootId(),
  pidNs: pidNs(),
  startTime: startTimeOf("self"),
});

/**
 * Whether the holder named in the lock is gone: "dead", "alive", or "lease" (another namespace
 * whose lease is still fresh — dead or alive cannot be told before it runs out).
 */
export function holderState(owner: LockBody, lockPath: string, me: LockBody): "dead" | "alive" | "lease" {
  // Another host's pid means nothing here: a folder shared over the network stays locked.
  if (owner.host !== me.host) return "alive";
  if (owner.bootId && me.bootId && owner.bootId !== me.bootId) return "dead";
  if (owner.pidNs && me.pidNs && owner.pidNs !== me.pidNs) {
    let age = Infinity;
    try {
      age = Date.now() - statSync(lockPath).mtimeMs;
    } catch {
      return "dead";
    }
    return age > LEASE_MS ? "dead" : "lease";
  }
  // Our namespace (or an old lock that did not record one): the pid must be alive and be the same process.
  // Our own pid: this very process (same start time) holds it, or an earlier process that had our pid.
  if (owner.pid === me.pid) return owner.startTime && owner.startTime === me.startTime ? "alive" : "dead";
  if (!alive(owner.pid)) return "dead";
  if (owner.startTime && startTimeOf(owner.pid) !== owner.startTime) return "dead"; // the pid was reused
  return "alive";
}

export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const mine = identity();
  // Written whole under a private name, then linked into place: link fails if the lock exists,
  // and no reader ever sees a half-written lock.
  const draft = `${path}.${process.pid}.${randomUUID()}`;
  writeFileSync(draft, JSON.stringify(mine));
  const refuse = (owner: LockBody | null, state: string): never => {
    let left: number | null = null;
    if (state === "lease")
      try {
        left = Math.max(0, LEASE_MS - (Date.now() - statSync(path).mtimeMs));
      } catch {
        left = 0;
      }
    throw new DataDirLocked(dir, owner?.pid ?? -1, left);
  };
  try {
    for (let round = 0; round < 3; round++) {
      try {
        linkSync(draft, path);
        return held(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const owner = readOwner(path);
      const state = owner ? holderState(owner, path, mine) : "dead";
      if (state !== "dead") refuse(owner, state);
      // Take the stale lock aside under a private name; if what was taken is not the stale one
      // (another process took over meanwhile), put it back and give up.
      const aside = `${path}.stale.${randomUUID()}`;
      try {
        renameSync(path, aside);
      } catch (r) {
        if ((r as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw r;
      }
      const taken = readOwner(aside);
      const takenState = taken ? holderState(taken, aside, mine) : "dead";
      if (takenState !== "dead") {
        try {
          linkSync(aside, path);
        } catch {
          // someone else holds it now; either way it is not ours
        }
        rmSync(aside, { force: true });
        refuse(taken, takenState);
      }
      rmSync(aside, { force: true });
    }
    return refuse(readOwner(path), "alive");
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * The lock for a server starting up: a holder in another pid namespace is waited for until its
 * lease runs out (a restarted container's own lock), a live one is refused at once.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  // A live holder renews its lease every second: past two lease periods it is refused like any live one.
  const until = Date.now() + 2 * LEASE_MS;
  for (;;) {
    try {
      return lockDataDir(dataDir);
    } catch (e) {
      if (!(e instanceof DataDirLocked) || e.retryAfterMs === null || Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, Math.min(e.retryAfterMs ?? 0, LEASE_MS) + 200));
    }
  }
}

/** Ours: the file's mtime is the lease, touched every HEARTBEAT_MS while we hold it. */
function held(path: string): DataDirLock {
  const beat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // the folder went away; the server's own storage errors will say so
    }
  }, HEARTBEAT_MS);
  beat.unref();
  return {
    path,
    release: () => {
      clearInterval(beat);
      // Only our own lock: after a takeover (we were presumed dead) the file is someone else's.
      const owner = readOwner(path);
      if (owner?.pid === process.pid && owner.startTime === startTimeOf("self")) rmSync(path, { force: true });
    },
  };
}
