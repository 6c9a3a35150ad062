import type postgres from "postgres";
import type { Tx } from "./db";
import { StaleVersionError } from "./errors";
import { JSON_OID } from "./runs";

export interface SnapshotRow {
  key: string;
  conversationId: string;
  machineId: string;
  machineVersion: number;
  rowVersion: number;
  snapshot: unknown;
}

export async function loadSnapshot(sql: Tx, key: string): Promise<SnapshotRow | null> {
  const rows = await sql<
    {
      key: string;
      conversation_id: string;
      machine_id: string;
      machine_version: number;
      row_version: number;
      snapshot: unknown;
    }[]
  >`
    select key, conversation_id, machine_id, machine_version, row_version, snapshot from machine_snapshots where key = ${key}`;
  const r = rows[0];
  return r
    ? {
        key: r.key,
        conversationId: r.conversation_id,
        machineId: r.machine_id,
        machineVersion: r.machine_version,
        rowVersion: r.row_version,
        snapshot: r.snapshot,
      }
    : null;
}

export interface SnapshotWrite {
  key: string;
  conversationId: string;
  machineId: string;
  machineVersion: number;
  snapshot: unknown;
  /** The row version that was read; null when the snapshot did not exist yet. */
  expectedRowVersion: number | null;
}

/**
 * Writes a snapshot only if nobody else has since the caller read it: one statement,
 * no read-modify-write round trip. Throws StaleVersionError when the check fails.
 */
export async function saveSnapshot(tx: Tx, w: SnapshotWrite): Promise<number> {
  const rows = await tx<{ row_version: number }[]>`${snapshotWriteCte(tx, w)}`;
  if (!rows[0]) throw new StaleVersionError(`snapshot ${w.key}`, w.expectedRowVersion);
  return rows[0].row_version;
}

/**
 * `saveSnapshot` as the body of a CTE of a turn's single commit statement (storage/turn-commit.ts):
 * returns `row_version` when the version check passed, no row when it did not. `when`: a
 * condition the write also needs (e.g. the run still running), evaluated in the same statement.
 */
export function snapshotWriteCte(sql: Tx, w: SnapshotWrite, when: postgres.Fragment = sql`true`): postgres.Fragment {
  const snapshot = snapshotParam(sql, w.snapshot);
  return w.expectedRowVersion === null
    ? sql`insert into machine_snapshots (key, conversation_id, machine_id, machine_version, row_version, snapshot)
          select ${w.key}, ${w.conversationId}, ${w.machineId}, ${w.machineVersion}, 1, ${snapshot} where ${when}
          on conflict (key) do nothing returning row_version`
    : sql`update machine_snapshots set snapshot = ${snapshot}, machine_version = ${w.machineVersion},
            row_version = row_version + 1, updated_at = now()
          where key = ${w.key} and row_version = ${w.expectedRowVersion} and ${when} returning row_version`;
}

/** The snapshot as JSON text for the json column (migration 000015): stored as sent, not re-encoded. */
const snapshotParam = (sql: Tx, snapshot: unknown) => sql.typed(snapshot as never, JSON_OID);
