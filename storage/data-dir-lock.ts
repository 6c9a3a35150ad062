import { randomUUID } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";

/**
 * One process per embedded DATA_DIR (issue 18 item 2). PGlite has no lock of its own: two
 * processes on one folder both start and then overwrite each other's pages (acknowledged turns
 * lost, messages without their conversation). The lock is a file holding the owner's pid, put
 * in place atomically; a lock whose pid is no longer alive (kill -9, a power cut) is taken over.
 */
export const LOCK_FILE = "server.lock";

export class DataDirLocked extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
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
}

function alive(pid: number): boolean {
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

export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const mine: LockBody = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  // Written whole under a private name, then linked into place: link fails if the lock exists,
  // and no reader ever sees a half-written lock.
  const draft = `${path}.${process.pid}.${randomUUID()}`;
  writeFileSync(draft, JSON.stringify(mine));
  try {
    for (let round = 0; round < 3; round++) {
      try {
        linkSync(draft, path);
        return { path, release: () => releaseIfMine(path) };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const owner = readOwner(path);
      if (owner && !stale(owner, mine.host)) throw new DataDirLocked(dir, owner.pid);
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
      if (taken && !stale(taken, mine.host)) {
        try {
          linkSync(aside, path);
        } catch {
          // someone else holds it now; either way it is not ours
        }
        rmSync(aside, { force: true });
        throw new DataDirLocked(dir, taken.pid);
      }
      rmSync(aside, { force: true });
    }
    const owner = readOwner(path);
    throw new DataDirLocked(dir, owner?.pid ?? -1);
  } finally {
    rmSync(draft, { force: true });
  }
}

/** A lock is stale when its pid is dead on this host. Another host's pid means nothing here: a folder shared over the network stays locked. */
function stale(owner: LockBody, host: string): boolean {
  return owner.host === host && !alive(owner.pid);
}

function releaseIfMine(path: string): void {
  // Only our own lock: after a takeover (we were presumed dead) the file is someone else's.
  if (readOwner(path)?.pid === process.pid) rmSync(path, { force: true });
}
