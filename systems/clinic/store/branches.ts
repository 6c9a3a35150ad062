import type { Tx } from "../../../storage/db";

/**
 * Versioned clinic settings: branch configs and step graphs, one active version each per
 * tenant. Rows carry plain JSON; the clinic layer validates them into a registry.
 */

export interface BranchRow {
  code: string;
  version: number;
  active: boolean;
  config: Record<string, unknown>;
  createdAt: Date;
}

export interface StepGraphRow {
  branch: string;
  version: number;
  active: boolean;
  graph: Record<string, unknown>;
  createdAt: Date;
}

type RawBranch = { code: string; version: number; active: boolean; config: Record<string, unknown>; created_at: Date };
type RawGraph = { branch: string; version: number; active: boolean; graph: Record<string, unknown>; created_at: Date };
const branchRow = (r: RawBranch): BranchRow => ({
  code: r.code,
  version: r.version,
  active: r.active,
  config: r.config,
  createdAt: r.created_at,
});
const graphRow = (r: RawGraph): StepGraphRow => ({
  branch: r.branch,
  version: r.version,
  active: r.active,
  graph: r.graph,
  createdAt: r.created_at,
});

export async function listActiveBranches(sql: Tx, tenantId: string): Promise<BranchRow[]> {
  const rows = await sql<
    RawBranch[]
  >`select code, version, active, config, created_at from clinic_branches where tenant_id = ${tenantId} and active order by code`;
  return rows.map(branchRow);
}

export async function listActiveStepGraphs(sql: Tx, tenantId: string): Promise<StepGraphRow[]> {
  const rows = await sql<
    RawGraph[]
  >`select branch, version, active, graph, created_at from clinic_step_graphs where tenant_id = ${tenantId} and active order by branch`;
  return rows.map(graphRow);
}

export async function listBranchVersions(sql: Tx, tenantId: string, code: string): Promise<BranchRow[]> {
  const rows = await sql<
    RawBranch[]
  >`select code, version, active, config, created_at from clinic_branches where tenant_id = ${tenantId} and code = ${code} order by version`;
  return rows.map(branchRow);
}

export async function listStepGraphVersions(sql: Tx, tenantId: string, branch: string): Promise<StepGraphRow[]> {
  const rows = await sql<
    RawGraph[]
  >`select branch, version, active, graph, created_at from clinic_step_graphs where tenant_id = ${tenantId} and branch = ${branch} order by version`;
  return rows.map(graphRow);
}

/** Particular versions of branches and step graphs (e.g. the ones a logged turn ran with), whether active or not. */
export async function listSettingsVersions(
  sql: Tx,
  tenantId: string,
  branches: { code: string; version: number }[],
  graphs: { branch: string; version: number }[],
): Promise<{ branches: BranchRow[]; graphs: StepGraphRow[] }> {
  const [b, g] = await Promise.all([
    sql<RawBranch[]>`select code, version, active, config, created_at from clinic_branches
      where tenant_id = ${tenantId} and (code, version) in (select * from unnest(${branches.map((x) => x.code)}::text[], ${branches.map((x) => x.version)}::int[])) order by code`,
    sql<RawGraph[]>`select branch, version, active, graph, created_at from clinic_step_graphs
      where tenant_id = ${tenantId} and (branch, version) in (select * from unnest(${graphs.map((x) => x.branch)}::text[], ${graphs.map((x) => x.version)}::int[])) order by branch`,
  ]);
  return { branches: b.map(branchRow), graphs: g.map(graphRow) };
}

/**
 * Writes version 1 of each seed row as active unless the tenant already has that branch.
 * Idempotent and safe under concurrent first requests (the primary key absorbs the race).
 */
export async function seedClinicSettings(
  sql: Tx,
  tenantId: string,
  branches: { code: string; config: object }[],
  graphs: { branch: string; graph: object }[],
): Promise<void> {
  for (const b of branches) {
    await sql`insert into clinic_branches (tenant_id, code, version, active, config)
              select ${tenantId}, ${b.code}, 1, true, ${sql.json(b.config as never)}
              where not exists (select 1 from clinic_branches where tenant_id = ${tenantId} and code = ${b.code})
              on conflict do nothing`;
  }
  for (const g of graphs) {
    await sql`insert into clinic_step_graphs (tenant_id, branch, version, active, graph)
              select ${tenantId}, ${g.branch}, 1, true, ${sql.json(g.graph as never)}
              where not exists (select 1 from clinic_step_graphs where tenant_id = ${tenantId} and branch = ${g.branch})
              on conflict do nothing`;
  }
}

/**
 * Version writes of one branch (or one step graph) take turns: `max(version) + 1` and the swap of
 * the active row are read-then-write, so two concurrent admin edits on the PostgreSQL server
 * would collide on the primary key or the one-active index (a 500). A transaction-scoped
 * advisory lock per (table, tenant, code) serializes them; the next statement sees the
 * previous writer's commit (read committed takes a snapshot per statement). `tx` must be a
 * transaction: outside one the lock would end with its own statement.
 */
async function serializeVersions(
  tx: Tx,
  table: "clinic_branches" | "clinic_step_graphs",
  tenantId: string,
  code: string,
): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`${table}/${tenantId}/${code}`}, 0))`;
}

/** The two versioned tables: the column naming what is versioned and the column holding a version. */
const VERSIONED = {
  clinic_branches: { key: "code", content: "config" },
  clinic_step_graphs: { key: "branch", content: "graph" },
} as const;

/** Adds the next version of `key` in `table`; with `activate` it replaces the active one in the same transaction. */
async function insertVersion(
  tx: Tx,
  table: keyof typeof VERSIONED,
  tenantId: string,
  key: string,
  content: object,
  activate: boolean,
): Promise<number> {
  const [t, k, c] = [tx(table), tx(VERSIONED[table].key), tx(VERSIONED[table].content)];
  await serializeVersions(tx, table, tenantId, key);
  if (activate) await tx`update ${t} set active = false where tenant_id = ${tenantId} and ${k} = ${key} and active`;
  const [row] = await tx<{ version: number }[]>`
    insert into ${t} (tenant_id, ${k}, version, active, ${c})
    select ${tenantId}, ${key}, coalesce(max(version), 0) + 1, ${activate}, ${tx.json(content as never)}
    from ${t} where tenant_id = ${tenantId} and ${k} = ${key}
    returning version`;
  return row!.version;
}

/** Makes an existing version of `key` in `table` the active one; false when that version does not exist. */
async function activateVersion(
  tx: Tx,
  table: keyof typeof VERSIONED,
  tenantId: string,
  key: string,
  version: number,
): Promise<boolean> {
  const [t, k] = [tx(table), tx(VERSIONED[table].key)];
  await serializeVersions(tx, table, tenantId, key);
  const exists = await tx`select 1 from ${t} where tenant_id = ${tenantId} and ${k} = ${key} and version = ${version}`;
  if (exists.length === 0) return false;
  await tx`update ${t} set active = false where tenant_id = ${tenantId} and ${k} = ${key} and active`;
  await tx`update ${t} set active = true where tenant_id = ${tenantId} and ${k} = ${key} and version = ${version}`;
  return true;
}

/** Adds the next branch config version; with `activate` it replaces the active one in the same transaction. */
export const insertBranchVersion = (tx: Tx, tenantId: string, code: string, config: object, activate: boolean) =>
  insertVersion(tx, "clinic_branches", tenantId, code, config, activate);

/** Adds the next step graph version; with `activate` it replaces the active one in the same transaction. */
export const insertStepGraphVersion = (tx: Tx, tenantId: string, branch: string, graph: object, activate: boolean) =>
  insertVersion(tx, "clinic_step_graphs", tenantId, branch, graph, activate);

/** Makes an existing branch config version the active one; false when that version does not exist. */
export const activateBranchVersion = (tx: Tx, tenantId: string, code: string, version: number) =>
  activateVersion(tx, "clinic_branches", tenantId, code, version);

/** Makes an existing step graph version the active one; false when that version does not exist. */
export const activateStepGraphVersion = (tx: Tx, tenantId: string, branch: string, version: number) =>
  activateVersion(tx, "clinic_step_graphs", tenantId, branch, version);
