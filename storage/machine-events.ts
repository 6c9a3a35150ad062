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
  conversation_id: string;
}

/**
 * The texts of the messages a turn stores under its run (messages.run_id) in the same commit as
 * its log: the run's last message of each role. A logged event's text that is one of them (or
 * starts with it) is stored as a reference — the patient's words and the model's reply were
 * stored twice per turn, in the messages and in the log (issue 19: WAL per turn).
 */
export interface RunMessages {
  user?: string;
  assistant?: string;
}

/**
 * In a stored event, a top-level field `{"@message": role}` (plus `rest`: what followed the
 * message's text in the field) stands for the text of the run's last message of that role. No
 * event the machines take holds such an object, so it cannot be mistaken for one of theirs.
 */
export const MESSAGE_REF = "@message";

/** Shorter texts are kept as they are: the reference would not be much shorter. */
const MIN_REF_TEXT = 24;

/** `event` with its fields that repeat a message of the run as references (a new object only when one does). */
export function refMessages(event: unknown, m: RunMessages): unknown {
  if (!event || typeof event !== "object" || Array.isArray(event)) return event;
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(event)) {
    if (typeof v !== "string") continue;
    for (const role of ["user", "assistant"] as const) {
      const text = m[role];
      if (text === undefined || text.length < MIN_REF_TEXT || !v.startsWith(text)) continue;
      // Spread first: the field keeps its place among the keys.
      out ??= { ...(event as Record<string, unknown>) };
      out[k] = v.length === text.length ? { [MESSAGE_REF]: role } : { [MESSAGE_REF]: role, rest: v.slice(text.length) };
      break;
    }
  }
  return out ?? event;
}

const isRef = (v: unknown): v is { [MESSAGE_REF]: "user" | "assistant"; rest?: string } =>
  !!v && typeof v === "object" && !Array.isArray(v) && MESSAGE_REF in v;

/** `refMessages` undone with the run's messages as stored. */
export function derefMessages(event: unknown, m: RunMessages, where: string): unknown {
  if (!event || typeof event !== "object" || Array.isArray(event)) return event;
  if (!Object.values(event).some(isRef)) return event;
  const out: Record<string, unknown> = { ...(event as Record<string, unknown>) };
  for (const [k, v] of Object.entries(out)) {
    if (!isRef(v)) continue;
    const text = m[v[MESSAGE_REF]];
    if (text === undefined) throw new Error(`${where}: the run's ${v[MESSAGE_REF]} message is missing`);
    out[k] = text + (v.rest ?? "");
  }
  return out;
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
  messages?: RunMessages,
): Promise<void> {
  if (events.length === 0) return;
  await machineEventsInsert(tx, key, conversationId, events, runId, machine, undefined, messages);
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
  messages?: RunMessages,
): postgres.Fragment {
  // Only a run's messages can be referred to (they are found by its id).
  if (messages && runId !== null) events = events.map((e) => refMessages(e, messages));
  const batch = events.length > 1;
  const stored = storedKey(key, conversationId);
  // The label is stored once until it changes (SAME_MACHINE, migration 000015).
  return sql`
    insert into machine_events (conversation_id, snapshot_key, seq, first_seq, event, run_id, machine)
    select ${conversationId}, ${stored}, base.s + ${events.length}, ${batch ? sql`base.s + 1` : sql`null::integer`},
           ${sql.typed((batch ? events : events[0]) as never, JSON_OID)}, ${runId},
           ${
             machine === null
               ? sql`null::text`
               : sql`case when (select p.machine from machine_events p
                                where p.conversation_id = ${conversationId} and p.snapshot_key = ${stored} and p.machine <> ''
                                order by p.seq desc limit 1) = ${machine} then ${SAME_MACHINE} else ${machine} end`
           }
    from (select coalesce(max(seq), 0) as s from machine_events
          where conversation_id = ${conversationId} and snapshot_key = ${stored}) base
    where ${when}`;
}

/**
 * The snapshot_key a log is stored under (migration 000026): '' for the conversation's own key
 * (the clinic and evidence dialogues key their snapshot by the conversation id), which the row's
 * conversation_id already holds; any other key (the Workbench's) as it is.
 */
export function storedKey(key: string, conversationId: string): string {
  return key === conversationId ? "" : key;
}

/**
 * A stored `machine` of '' (migration 000015): the same label as the closest earlier row of the
 * log whose label is neither null nor '' — a clinic label names every settings version, and
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

/**
 * Rows whose events refer to their run's messages (`MESSAGE_REF`) with those references undone:
 * the messages of those runs are read in one statement (by the conversation's index), not per row.
 */
async function withMessages(sql: Tx, rows: StoredRow[]): Promise<StoredRow[]> {
  const marked = new Set(rows.filter((r) => r.run_id !== null && JSON.stringify(r.event).includes(`"${MESSAGE_REF}"`)));
  if (marked.size === 0) return rows;
  const byRun = new Map<string, RunMessages>();
  const conversations = [...new Set([...marked].map((r) => r.conversation_id))];
  const runIds = [...new Set([...marked].map((r) => r.run_id!))];
  const msgs = await sql<{ run_id: string; role: string; text: string }[]>`
    select run_id, role, text from messages
    where conversation_id = any(${conversations}::uuid[]) and run_id = any(${runIds}::uuid[]) and role in ('user', 'assistant')
    order by seq`;
  // In seq order: the run's last message of a role is the one that stays.
  for (const m of msgs) byRun.set(m.run_id, { ...byRun.get(m.run_id), [m.role]: m.text });
  return rows.map((r) => {
    if (!marked.has(r)) return r;
    const m = byRun.get(r.run_id!) ?? {};
    const where = `machine event ${r.seq} of ${r.conversation_id}`;
    const event =
      r.first_seq === null
        ? derefMessages(r.event, m, where)
        : (r.event as unknown[]).map((e) => derefMessages(e, m, where));
    return { ...r, event };
  });
}

/** The log of the snapshot `key` of the conversation (the one it belongs to: machine_snapshots.conversation_id). */
export async function listMachineEvents(sql: Tx, key: string, conversationId: string): Promise<LoggedEvent[]> {
  const rows = await sql<StoredRow[]>`
    select seq, first_seq, event, machine, run_id, conversation_id from machine_events
    where conversation_id = ${conversationId} and snapshot_key = ${storedKey(key, conversationId)} order by seq`;
  return unpack(await withMessages(sql, rows), 0);
}

/**
 * A machine's logged events after `afterSeq`, in order (the inspector bridge follows logs this
 * way): at most `limit` stored rows, each possibly several events — a row holding `afterSeq`
 * itself gives the events after it.
 */
export async function listMachineEventsAfter(
  sql: Tx,
  key: string,
  conversationId: string,
  afterSeq: number,
  limit = 1_000,
): Promise<LoggedEvent[]> {
  const stored = storedKey(key, conversationId);
  const rows = await sql<(StoredRow & { prior: string | null })[]>`
    select seq, first_seq, event, machine, run_id, conversation_id,
      (select p.machine from machine_events p
       where p.conversation_id = ${conversationId} and p.snapshot_key = ${stored} and p.seq <= ${afterSeq}
         and p.machine <> ''
       order by p.seq desc limit 1) as prior
    from machine_events where conversation_id = ${conversationId} and snapshot_key = ${stored} and seq > ${afterSeq}
    order by seq limit ${limit}`;
  return unpack(await withMessages(sql, rows), afterSeq, rows[0]?.prior ?? null);
}

/**
 * The type of the last event the snapshot `key`'s machine took (null with no log): diagrams draw
 * the transitions it fired as the last one. Only the type is read — never a patient's text.
 */
export async function lastMachineEventType(sql: Tx, key: string, conversationId: string): Promise<string | null> {
  const rows = await sql<{ type: string | null }[]>`
    select case when json_typeof(event) = 'array' then event -> (json_array_length(event) - 1) ->> 'type'
                else event ->> 'type' end as type
    from machine_events where conversation_id = ${conversationId} and snapshot_key = ${storedKey(key, conversationId)}
    order by seq desc limit 1`;
  return rows[0]?.type ?? null;
}
