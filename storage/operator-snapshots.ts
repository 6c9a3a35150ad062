import type { Tx } from "./db";

/**
 * Read-only views of machine snapshots for operators: where a conversation stands in a machine
 * (diagrams) and which snapshots changed lately (the live inspector bridge).
 */

export interface SnapshotView {
  key: string;
  conversationId: string;
  tenantId: string;
  machineId: string;
  machineVersion: number;
  rowVersion: number;
  snapshot: { value?: unknown; context?: Record<string, unknown>; status?: string };
  updatedAt: Date;
}

type Raw = {
  key: string;
  conversation_id: string;
  tenant_id: string;
  machine_id: string;
  machine_version: number;
  row_version: number;
  snapshot: SnapshotView["snapshot"];
  updated_at: Date;
};
const view = (r: Raw): SnapshotView => ({
  key: r.key,
  conversationId: r.conversation_id,
  tenantId: r.tenant_id,
  machineId: r.machine_id,
  machineVersion: r.machine_version,
  rowVersion: r.row_version,
  snapshot: r.snapshot,
  updatedAt: r.updated_at,
});

/** The conversation's most recently written snapshot of that machine (tenant-scoped), or one named by key. */
export async function latestSnapshot(
  sql: Tx,
  tenantId: string,
  conversationId: string,
  machineId: string,
  key?: string,
): Promise<SnapshotView | null> {
  const rows = await sql<Raw[]>`
    select s.key, s.conversation_id, c.tenant_id, s.machine_id, s.machine_version, s.row_version, s.snapshot, s.updated_at
    from machine_snapshots s join conversations c on c.id = s.conversation_id
    where s.conversation_id = ${conversationId} and c.tenant_id = ${tenantId} and s.machine_id = ${machineId}
      ${key ? sql`and s.key = ${key}` : sql``}
    order by s.updated_at desc, s.key desc limit 1`;
  return rows[0] ? view(rows[0]) : null;
}

/** Snapshots written after `since`, oldest first (bounded: the bridge polls and catches up). */
export async function snapshotsChangedSince(sql: Tx, since: Date, limit = 200): Promise<SnapshotView[]> {
  const rows = await sql<Raw[]>`
    select s.key, s.conversation_id, c.tenant_id, s.machine_id, s.machine_version, s.row_version, s.snapshot, s.updated_at
    from machine_snapshots s join conversations c on c.id = s.conversation_id
    where s.updated_at > ${since}
    order by s.updated_at, s.key limit ${limit}`;
  return rows.map(view);
}

/** Every machine snapshot of a conversation (its own and those of its Interactions, clarifications…). */
export async function conversationSnapshots(
  sql: Tx,
  conversationId: string,
): Promise<{ key: string; machineId: string; machineVersion: number; rowVersion: number; snapshot: unknown }[]> {
  const rows = await sql<
    { key: string; machine_id: string; machine_version: number; row_version: number; snapshot: unknown }[]
  >`
    select key, machine_id, machine_version, row_version, snapshot from machine_snapshots where conversation_id = ${conversationId} order by updated_at, key`;
  return rows.map((r) => ({
    key: r.key,
    machineId: r.machine_id,
    machineVersion: r.machine_version,
    rowVersion: r.row_version,
    snapshot: r.snapshot,
  }));
}
