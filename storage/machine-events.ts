import type postgres from "postgres";
import type { Tx } from "./db";
import { JSON_OID } from "./runs";

/** One logged event and the machine definition that took it. */
export interface LoggedEvent {
  seq: number;
  event: unknown;
  /** "<machine id>@<version>[|<settings versions>]"; null on rows logged before it was recorded. */
  machine: string | null;
  runId: string | null;
}

/** A stored row: one event, or (first_seq set) the events first_seq .. seq as an array (migration 000013). */
interface StoredRow {
  seq: number;
  first_seq: number | null;
  event: unknown;
  machine: string | null;
  run_id: string | null;
}

/**
 * Appends events to a machine's log (seq continues from the last one) in one statement, as one
 * row: a turn's events share its run and machine label, so one heap tuple and one index entry
 * carry them all (the ids stay one per event). Inside a turn it runs after the snapshot's
 * version-checked write, so a concurrent turn waits on the snapshot row before it reads the last seq here.
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
  await machineEventsInsert(tx, key, conversationId, events, runId, machine);
}

/**
 * The insert of `appendMachineEvents`, for a CTE of a turn's single commit statement too: it
 * inserts only `when` holds (there: the snapshot's version check passed). In one statement the
 * last seq is read in the statement's snapshot; that is the current one whenever the version
 * check passed, since every turn on the key writes its snapshot row in the same statement.
 */
export function machineEventsInsert(
  sql: Tx,
  key: string,
  conversationId: string,
  events: unknown[],
  runId: string | null,
  machine: string | null,
  when: postgres.Fragment = sql`true`,
): postgres.Fragment {
  const batch = events.length > 1;
  // The label is stored once until it changes (SAME_MACHINE, migration 000015).
  return sql`
    insert into machine_events (snapshot_key, seq, first_seq, conversation_id, event, run_id, machine)
    select ${key}, base.s + ${events.length}, ${batch ? sql`base.s + 1` : sql`null::integer`}, ${conversationId},
           ${sql.typed((batch ? events : events[0]) as never, JSON_OID)}, ${runId},
           ${
             machine === null
               ? sql`null::text`
               : sql`case when (select p.machine from machine_events p where p.snapshot_key = ${key} and p.machine <> ''
                                order by p.seq desc limit 1) = ${machine} then ${SAME_MACHINE} else ${machine} end`
           }
    from (select coalesce(max(seq), 0) as s from machine_events where snapshot_key = ${key}) base
    where ${when}`;
}

/**
 * A stored `machine` of '' (migration 000015): the same label as the closest earlier row of the
 * key whose label is neither null nor '' — a clinic label names every settings version, and
 * stays the same turn after turn until the settings change.
 */
export const SAME_MACHINE = "";

/**
 * Stored rows (in seq order) back to one entry per event, keeping those after `afterSeq`.
 * `prior`: the label in force before the first row (for rows read from the middle of a log).
 */
function unpack(rows: StoredRow[], afterSeq: number, prior: string | null = null): LoggedEvent[] {
  const out: LoggedEvent[] = [];
  let label = prior;
  for (const r of rows) {
    let machine = r.machine;
    if (machine === SAME_MACHINE) machine = label;
    else if (machine !== null) label = machine;
    if (r.first_seq === null) {
      if (r.seq > afterSeq) out.push({ seq: r.seq, event: r.event, machine, runId: r.run_id });
      continue;
    }
    (r.event as unknown[]).forEach((event, i) => {
      const seq = r.first_seq! + i;
      if (seq > afterSeq) out.push({ seq, event, machine, runId: r.run_id });
    });
  }
  return out;
}

export async function listMachineEvents(sql: Tx, key: string): Promise<LoggedEvent[]> {
  const rows = await sql<StoredRow[]>`
    select seq, first_seq, event, machine, run_id from machine_events where snapshot_key = ${key} order by seq`;
  return unpack(rows, 0);
}

/**
 * A machine's logged events after `afterSeq`, in order (the inspector bridge follows logs this
 * way): at most `limit` stored rows, each possibly several events — a row holding `afterSeq`
 * itself gives the events after it.
 */
export async function listMachineEventsAfter(
  sql: Tx,
  key: string,
  afterSeq: number,
  limit = 1_000,
): Promise<LoggedEvent[]> {
  const rows = await sql<(StoredRow & { prior: string | null })[]>`
    select seq, first_seq, event, machine, run_id,
      (select p.machine from machine_events p where p.snapshot_key = ${key} and p.seq <= ${afterSeq} and p.machine <> ''
       order by p.seq desc limit 1) as prior
    from machine_events where snapshot_key = ${key} and seq > ${afterSeq} order by seq limit ${limit}`;
  return unpack(rows, afterSeq, rows[0]?.prior ?? null);
}
