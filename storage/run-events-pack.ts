import type { RunEventRow } from "./runs";
import { expand, metaTemplate, type CompactFields } from "./meta-defaults";

/**
 * How a run's events are stored compactly in run_events (migrations 000012, 000013): consecutive
 * events batched in one row, the run's own ids, its final's message and its tokens written as
 * references to what other rows already hold, and read back exactly as they were emitted. Pure:
 * storage/runs.ts reads and writes the rows.
 */

/** The `event` of a stored row that holds several consecutive events (migration 000012). */
export const BATCH_EVENT = "batch";

/** A stored run_events row: one event, or a batch of consecutive ones (ids first_seq .. seq, migration 000012). */
export interface StoredRow {
  seq: number;
  first_seq: number | null;
  event: string;
  data: unknown;
  /** Read with the row when its batch holds a FINAL_OF_MESSAGE item: the text of the run's assistant message… */
  reply?: string | null;
  /** …and its meta. */
  reply_meta?: Record<string, unknown> | null;
  /** Read with the row: the run's ids, for a RUN_STARTED_OF_RUN item. */
  run_id?: string;
  conversation_id?: string;
}

/** A run's own ids, as its run row holds them. */
export interface RunIds {
  id: string;
  conversationId: string;
}

/**
 * In a batch, `["@run_started", data]` is the run's `run_started` whose top-level values that are
 * the run's own id or its conversation's id (its run row has both) are stored as "@run" and
 * "@conversation": two UUIDs a turn stored again in every run (issue 19: WAL per turn). A
 * `run_started` that already holds one of those strings is stored as it is, so they never mean
 * anything else. The usual `run_started`, exactly `{runId, <key>: conversation id}`, is stored as
 * the key's name alone: `["@run_started", "threadId"]`.
 */
export const RUN_STARTED_OF_RUN = "@run_started";
const RUN_REF = "@run";
const CONVERSATION_REF = "@conversation";

function runStartedOfRun(items: [string, unknown][], run: RunIds | undefined): [string, unknown][] {
  if (!run) return items;
  const i = items.findIndex(([event]) => event === "run_started");
  if (i < 0) return items;
  const data = items[i]![1];
  if (!data || typeof data !== "object" || Array.isArray(data)) return items;
  const values = Object.values(data);
  if (values.some((v) => v === RUN_REF || v === CONVERSATION_REF)) return items;
  if (!values.some((v) => v === run.id || v === run.conversationId)) return items;
  const entries = Object.entries(data);
  const out = items.slice();
  if (
    entries.length === 2 &&
    entries[0]![0] === "runId" &&
    entries[0]![1] === run.id &&
    entries[1]![1] === run.conversationId
  ) {
    out[i] = [RUN_STARTED_OF_RUN, entries[1]![0]];
    return out;
  }
  const ref = Object.fromEntries(
    entries.map(([k, v]) => [k, v === run.id ? RUN_REF : v === run.conversationId ? CONVERSATION_REF : v]),
  );
  out[i] = [RUN_STARTED_OF_RUN, ref];
  return out;
}

function runStartedBack(items: [string, unknown][], r: StoredRow): [string, unknown][] {
  if (!items.some(([event]) => event === RUN_STARTED_OF_RUN)) return items;
  if (!r.run_id || !r.conversation_id) throw new Error(`run event batch ${r.seq}: the run's ids were not read with it`);
  return items.map(([event, data]) =>
    event === RUN_STARTED_OF_RUN
      ? [
          "run_started",
          typeof data === "string"
            ? { runId: r.run_id, [data]: r.conversation_id }
            : Object.fromEntries(
                Object.entries(data as object).map(([k, v]) => [
                  k,
                  v === RUN_REF ? r.run_id : v === CONVERSATION_REF ? r.conversation_id : v,
                ]),
              ),
        ]
      : [event, data],
  );
}

/**
 * In a batch, `["@final", data]` is the run's `final` event whose `reply` is the text of the
 * run's assistant message, stored by the same commit (messages.run_id): the reply is stored
 * there only, and `data.reply` holds 0 in its place so the key keeps its position — a resumed
 * `final` is then the same JSON text as the one sent live. (A turn's reply was stored three times:
 * the message, `final`, the machine log.) Likewise a field of `final` that the message's meta
 * holds under the same key, with the same JSON text (the clinic's `state` and `events`), holds
 * META_REF — in an item named FINAL_OF_MESSAGE_META only, so that a `final` holding that string
 * itself is never misread. A meta field stored compact under a template (storage/meta-defaults.ts:
 * without the fields that hold their defaults) is referred to as `"@meta:<template>"` when it
 * expands to the same JSON text, in an item named FINAL_OF_MESSAGE_META_TEMPLATES — a name of its
 * own, so that no row stored before (whose kept values may be any string) reads as a reference.
 * A `final` with a value that begins with META_REF refers to nothing. `listRunEvents` reads the
 * message with the row; an unregistered template fails the read, naming it.
 */
export const FINAL_OF_MESSAGE = "@final";
export const FINAL_OF_MESSAGE_META = "@final+meta";
export const FINAL_OF_MESSAGE_META_TEMPLATES = "@final+meta2";
const META_REF = "@meta";
const isMessageFinal = (event: string) =>
  event === FINAL_OF_MESSAGE || event === FINAL_OF_MESSAGE_META || event === FINAL_OF_MESSAGE_META_TEMPLATES;

/** The assistant message a turn stores under its run, as its `final` may refer to it. */
export interface ReplyMessage {
  text: string;
  /** Its meta as stored (a json column: read back with the same JSON text). */
  meta?: Record<string, unknown>;
  /** The meta's fields stored compact, each under the template named (storage/meta-defaults.ts `compactMeta`). */
  compact?: CompactFields;
}

/**
 * Consecutive events as one row: a turn's fourteen tokens and its ending cost one heap tuple,
 * one index entry and one WAL record instead of one each — the ids stay one per event, so
 * Last-Event-ID resumes anywhere. A single event stays a plain row. Streamed tokens that are
 * pieces of a reply stored in the same row (`final`) are stored by their lengths, not again.
 */
export function packRunEvents(events: RunEventRow[], replyMessage?: ReplyMessage, run?: RunIds): StoredRow[] {
  if (events.length === 0) return [];
  if (events.length === 1)
    return [{ seq: events[0]!.seq, first_seq: null, event: events[0]!.event, data: events[0]!.data ?? {} }];
  for (let i = 1; i < events.length; i++)
    if (events[i]!.seq !== events[i - 1]!.seq + 1)
      throw new Error(`run events to store are not consecutive: ${events[i - 1]!.seq} then ${events[i]!.seq}`);
  return [
    {
      seq: events.at(-1)!.seq,
      first_seq: events[0]!.seq,
      event: BATCH_EVENT,
      data: runStartedOfRun(finalOfMessage(packTokens(events.map((e) => [e.event, e.data ?? {}])), replyMessage), run),
    },
  ];
}

/** The batch's `final` as FINAL_OF_MESSAGE when its reply is exactly the message's text. */
function finalOfMessage(items: [string, unknown][], message: ReplyMessage | undefined): [string, unknown][] {
  if (message === undefined) return items;
  const i = items.findIndex(([event, data]) => event === "final" && replyOf(data) === message.text);
  if (i < 0) return items;
  const data = items[i]![1] as Record<string, unknown>;
  const meta = message.meta;
  // A field that already reads like a reference keeps every field as it is: the reference never means two things.
  const refs = !!meta && !Object.values(data).some((v) => typeof v === "string" && v.startsWith(META_REF));
  let referred = false;
  let templated = false;
  const stored = Object.fromEntries(
    Object.entries(data).map(([k, v]) => {
      if (k === "reply") return [k, 0];
      if (!refs || !Object.hasOwn(meta, k)) return [k, v];
      const json = JSON.stringify(v);
      const template = message.compact && Object.hasOwn(message.compact, k) ? message.compact[k] : undefined;
      const ref = template ? `${META_REF}:${template}` : META_REF;
      // What the reader will make of the reference: it must be the very text sent live.
      const whole = template ? expand(metaTemplate(template), meta[k]) : meta[k];
      if (json.length <= ref.length + 2 || JSON.stringify(whole) !== json) return [k, v];
      referred = true;
      templated ||= !!template;
      return [k, ref];
    }),
  );
  const out = items.slice();
  out[i] = [templated ? FINAL_OF_MESSAGE_META_TEMPLATES : referred ? FINAL_OF_MESSAGE_META : FINAL_OF_MESSAGE, stored];
  return out;
}

/** FINAL_OF_MESSAGE back to `final`, its reply and meta fields in their places (before `unpackTokens`, whose slices cut that reply). */
function messageFinal(items: [string, unknown][], r: StoredRow): [string, unknown][] {
  if (!items.some(([event]) => isMessageFinal(event))) return items;
  const reply = r.reply;
  if (typeof reply !== "string") throw new Error(`run event batch ${r.seq}: the reply's assistant message is missing`);
  return items.map(([event, data]) =>
    isMessageFinal(event)
      ? [
          "final",
          Object.fromEntries(
            Object.entries(data as object).map(([k, v]) => {
              if (k === "reply") return [k, reply];
              if (event === FINAL_OF_MESSAGE || typeof v !== "string") return [k, v];
              const template =
                event === FINAL_OF_MESSAGE_META_TEMPLATES && v.startsWith(`${META_REF}:`)
                  ? v.slice(META_REF.length + 1)
                  : null;
              if (v !== META_REF && template === null) return [k, v];
              if (!r.reply_meta || !Object.hasOwn(r.reply_meta, k))
                throw new Error(`run event batch ${r.seq}: the assistant message's meta has no ${k}`);
              return [k, template === null ? r.reply_meta[k] : expand(metaTemplate(template), r.reply_meta[k])];
            }),
          ),
        ]
      : [event, data],
  );
}

/**
 * In a batch, a run of ≥ 2 `token` events whose deltas are consecutive slices of the reply of a
 * later event of the same batch (its data's `reply` string: the closing `final`) is stored as
 * one item `["@token", "<start>:<len>,<len>,…"]`: the reply is stored once, the tokens as where
 * they cut it. Tokens that are not such slices (a separator the reply lacks, another key) stay as
 * they were. `unpackTokens` gives back exactly the same events.
 */
export const TOKEN_SLICES = "@token";

const replyOf = (data: unknown): string | null => {
  const r = (data as { reply?: unknown } | null)?.reply;
  return typeof r === "string" ? r : null;
};

const deltaOf = (item: [string, unknown]): string | null => {
  if (item[0] !== "token") return null;
  const d = item[1] as { delta?: unknown } | null;
  return d && typeof d.delta === "string" && Object.keys(d).length === 1 ? d.delta : null;
};

export function packTokens(items: [string, unknown][]): [string, unknown][] {
  // The first item with a reply: the one `unpackTokens` finds after every token item before it.
  const last = items.findIndex((it) => replyOf(it[1]) !== null);
  if (last < 2) return items;
  const reply = replyOf(items[last]![1])!;
  const out: [string, unknown][] = [];
  let cursor = 0;
  let i = 0;
  while (i < last) {
    const first = deltaOf(items[i]!);
    const start = first ? reply.indexOf(first, cursor) : -1;
    if (start < 0) {
      out.push(items[i++]!);
      continue;
    }
    const lens: number[] = [];
    let at = start;
    for (let d = first; d && i < last && reply.startsWith(d, at); d = i < last ? deltaOf(items[i]!) : null) {
      lens.push(d.length);
      at += d.length;
      i++;
    }
    if (lens.length >= 2) out.push([TOKEN_SLICES, `${start}:${lens.join(",")}`]);
    else out.push(...items.slice(i - lens.length, i));
    cursor = at;
  }
  out.push(...items.slice(last));
  return out;
}

export function unpackTokens(items: [string, unknown][]): [string, unknown][] {
  if (!items.some((it) => it[0] === TOKEN_SLICES)) return items;
  const out: [string, unknown][] = [];
  items.forEach(([event, data], i) => {
    if (event !== TOKEN_SLICES) return void out.push([event, data]);
    let reply: string | null = null;
    for (let j = i + 1; j < items.length && reply === null; j++) reply = replyOf(items[j]![1]);
    const [start, lens] = String(data).split(":");
    let at = Number(start);
    for (const len of lens!.split(",").map(Number)) {
      out.push(["token", { delta: reply!.slice(at, at + len) }]);
      at += len;
    }
  });
  return out;
}

/**
 * Stored rows (ordered by seq, i.e. by their last id) back to events in id order, keeping those
 * after `afterSeq`. Rows may overlap — a flush's batch and the commit's longer one from the same
 * first id — so an id already taken is skipped.
 */
export function unpackRunEvents(rows: StoredRow[], afterSeq = 0): RunEventRow[] {
  const out: RunEventRow[] = [];
  let last = afterSeq;
  for (const r of rows) {
    if (r.first_seq === null) {
      if (r.seq > last) (out.push({ seq: r.seq, event: r.event, data: r.data }), (last = r.seq));
      continue;
    }
    if (r.seq <= last) continue;
    unpackTokens(runStartedBack(messageFinal(r.data as [string, unknown][], r), r)).forEach(([event, data], i) => {
      const seq = r.first_seq! + i;
      if (seq > last) (out.push({ seq, event, data }), (last = seq));
    });
  }
  return out;
}
