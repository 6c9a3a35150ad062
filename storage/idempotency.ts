import type { Tx } from "./db";

/** How long a key is honoured: a retry after this starts a new turn (doc/clients.md). */
export const IDEMPOTENCY_TTL_HOURS = 24;

export interface IdempotencyRow {
  runId: string;
  conversationId: string;
  requestHash: string;
  /** The status of the run the key started (null: the run row is gone). */
  runStatus: "running" | "completed" | "failed" | null;
}

/** The run a live (unexpired) key started, with that run's status. */
export async function findIdempotencyKey(sql: Tx, tenantId: string, key: string): Promise<IdempotencyRow | null> {
  const rows = await sql<
    { run_id: string; conversation_id: string; request_hash: string; status: IdempotencyRow["runStatus"] }[]
  >`
    select k.run_id, k.conversation_id, k.request_hash, r.status
    from idempotency_keys k left join runs r on r.id = k.run_id
    where k.tenant_id = ${tenantId} and k.key = ${key}
      and k.created_at > now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`;
  const r = rows[0];
  return r
    ? { runId: r.run_id, conversationId: r.conversation_id, requestHash: r.request_hash, runStatus: r.status }
    : null;
}

/** The running run of a conversation (at most one: runs_one_running_per_conversation). */
export async function findRunningRun(
  sql: Tx,
  conversationId: string,
): Promise<{ id: string; owner: string; heartbeatAt: Date } | null> {
  const rows = await sql<{ id: string; owner: string; heartbeat_at: Date }[]>`
    select id, owner, heartbeat_at from runs where conversation_id = ${conversationId} and status = 'running' limit 1`;
  const r = rows[0];
  return r ? { id: r.id, owner: r.owner, heartbeatAt: r.heartbeat_at } : null;
}
