import type { Tx } from "./db";

/** One logged event and the machine definition that took it. */
export interface LoggedEvent {
  seq: number;
  event: unknown;
  /** "<machine id>@<version>[|<settings versions>]"; null on rows logged before it was recorded. */
  machine: string | null;
  runId: string | null;
}

/**
 * Appends events to a machine's log (seq continues from the last one) in one statement. Inside
 * a turn it runs after the snapshot's version-checked write, so a concurrent turn waits on the
 * snapshot row before it reads the last seq here.
 */
export async function appendMachineEvents(
  tx: Tx,
  key: string,
  conversationId: string,
  events: unknown[],
  runId: string | null = null,
  machine: string | null = null,
): Promise<void> {
  if (events.length === 0) return;
  await tx`
    insert into machine_events (snapshot_key, seq, conversation_id, event, run_id, machine)
    select ${key}, base.s + e.ord, ${conversationId}, e.event, ${runId}, ${machine}
    from (select coalesce(max(seq), 0) as s from machine_events where snapshot_key = ${key}) base,
         rows from (jsonb_array_elements(${tx.json(events as never)})) with ordinality as e(event, ord)`;
}

export async function listMachineEvents(sql: Tx, key: string): Promise<LoggedEvent[]> {
  const rows = await sql<{ seq: number; event: unknown; machine: string | null; run_id: string | null }[]>`
    select seq, event, machine, run_id from machine_events where snapshot_key = ${key} order by seq`;
  return rows.map((r) => ({ seq: r.seq, event: r.event, machine: r.machine, runId: r.run_id }));
}

/** A machine's logged events after `afterSeq`, in order (the inspector bridge follows logs this way). */
export async function listMachineEventsAfter(
  sql: Tx,
  key: string,
  afterSeq: number,
  limit = 1_000,
): Promise<LoggedEvent[]> {
  const rows = await sql<{ seq: number; event: unknown; machine: string | null; run_id: string | null }[]>`
    select seq, event, machine, run_id from machine_events where snapshot_key = ${key} and seq > ${afterSeq} order by seq limit ${limit}`;
  return rows.map((r) => ({ seq: r.seq, event: r.event, machine: r.machine, runId: r.run_id }));
}
