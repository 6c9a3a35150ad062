import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * How the embedded PGlite starts with less memory (issue 33: 920 MB idle → under 300 MB).
 *
 * A WebAssembly memory only grows: whatever initdb touched on first start stays resident for
 * the life of the process. So a data folder without a cluster is initialised by a short-lived
 * child process, and the server then opens the existing cluster and never runs initdb itself.
 * Durability is unchanged: the same files, the same WAL, the same PGlite start parameters
 * apart from the smaller caches below.
 */

/** Small caches: one connection, one backend, OLTP rows — the OS page cache still holds the files. */
export const pgliteMemorySettings = [
  "shared_buffers=16MB",
  "wal_buffers=1MB",
  "temp_buffers=1MB",
  "work_mem=2MB",
  "maintenance_work_mem=16MB",
];

/** PGlite's own start parameters plus the memory settings (`-c name=value` each). */
export function pgliteStartParams(defaults: readonly string[]): string[] {
  return [...defaults, ...pgliteMemorySettings.flatMap((s) => ["-c", s])];
}

/** True when `pgDir` already holds an initialised cluster. */
export const clusterExists = (pgDir: string) => existsSync(join(pgDir, "PG_VERSION"));

// The child opens (and so initialises) the cluster, then closes it cleanly. Plain ESM passed to
// `node -e`, so it runs the same from the TypeScript sources and from the compiled bundle.
const initScript = `
const [url, dataDir] = process.argv.slice(1);
const { PGlite } = await import(url);
const db = await PGlite.create({ dataDir });
await db.query("select 1");
await db.close();
`;

/** Initialises a cluster in `pgDir` in a child process unless one is already there. */
export async function initClusterOutOfProcess(pgDir: string): Promise<void> {
  if (clusterExists(pgDir)) return;
  const url = import.meta.resolve("@electric-sql/pglite");
  try {
    await promisify(execFile)(process.execPath, ["--input-type=module", "-e", initScript, url, pgDir], {
      maxBuffer: 4 * 1024 * 1024,
    });
  } catch (e) {
    const err = e as Error & { stderr?: string };
    throw new Error(`initialising the embedded database in ${pgDir} failed: ${err.stderr?.trim() || err.message}`);
  }
  if (!clusterExists(pgDir)) throw new Error(`initialising the embedded database in ${pgDir} left no cluster`);
}
