import type { Tx } from "../../storage/db";
import { compactMeta, expand, registerMetaTemplate, type CompactFields } from "../../storage/meta-defaults";
import type { DialogueEmitted } from "./dialogue.machine";

/**
 * The thread state's fields in their order, each with its initial value (types.ts
 * `initialClinicState`): a stored reply's state leaves out the fields that hold it — on most
 * turns the counters, `suspended` and `escalationReason`, and `step` and `slots` outside a
 * stepped branch (issue 19: WAL per turn). Registered here, where the stored meta is written and
 * read: the module is loaded with the clinic system (index.ts), so wherever the server reads a
 * clinic run's `final` (storage/runs.ts names this template) it is registered. Written out, not
 * taken from `initialClinicState()`: a change there must not change how stored states read. Never edit it:
 * stored finals name it, and stored states were left without its defaults. A state that gains a
 * field still stores and reads back exactly (a field the template does not name is kept); to
 * leave a new field out too, register a new name beside this one, and expand with the one a
 * stored state was compacted with.
 */
export const CLINIC_STATE = registerMetaTemplate("clinic.state", {
  activeBranch: null,
  routerDecision: null,
  step: null,
  slots: {},
  handoffCount: 0,
  softInsertionCount: 0,
  suspended: null,
  escalationReason: null,
});

/**
 * The meta of a turn's assistant message, as stored: the state after the turn (once — the run's
 * `final` refers to it, storage/runs.ts FINAL_OF_MESSAGE — and without the fields that hold their
 * initial values, CLINIC_STATE), what happened, what it was answered from, and the settings
 * versions that answered it — only when they differ from the ones the thread's messages last
 * named (`named`; migration 000021): they change when an operator edits the settings, not turn by
 * turn. `events` and `fragments` are left out when empty (most turns: 27 bytes a turn of WAL,
 * issue 19). The thread's views show every message whole (`clinicMessagesMeta`). `compact` names
 * the fields stored compact, for the run's `final` that refers to them.
 */
export function assistantMeta(
  f: Extract<DialogueEmitted, { type: "clinic.final" }>,
  settings: string,
  named: string | null,
): { meta: Record<string, unknown>; compact: CompactFields } {
  return compactMeta(wholeMeta(f, settings, named), { state: CLINIC_STATE });
}

/** `assistantMeta` with the state whole. */
function wholeMeta(f: Extract<DialogueEmitted, { type: "clinic.final" }>, settings: string, named: string | null) {
  return {
    state: f.state,
    ...(f.events.length ? { events: f.events } : {}),
    ...(f.fragments.length ? { fragments: f.fragments.map((x) => x.docId) } : {}),
    ...(settings !== named ? { settings } : {}),
    // Why a tail or a signal was not used (the Sandbox shows them on the turn's badges).
    ...(f.notes.length ? { notes: f.notes } : {}),
  };
}

/**
 * Stored messages' meta (in seq order) as the thread's views show it (CONTRACT §5: activeBranch,
 * step, events, fragments, settings): the state's fields flat beside the rest, and the settings
 * versions on every reply — those of the closest earlier message that names them (read for the
 * first replies of the page from before it, by the index of messages that name them). A meta
 * stored before the state was kept whole (flat, naming its settings) is shown as it is; a state
 * stored compact is shown whole (one stored whole expands to itself).
 */
export async function clinicMessagesMeta(
  sql: Tx,
  conversationId: string,
  messages: { seq: number; meta: Record<string, unknown> }[],
): Promise<Record<string, unknown>[]> {
  const isReply = (meta: Record<string, unknown>) =>
    !!meta.state && typeof meta.state === "object" && !Array.isArray(meta.state);
  const first = messages.find((m) => isReply(m.meta) || typeof m.meta.settings === "string");
  let settings: unknown = undefined;
  if (first && isReply(first.meta) && first.meta.settings === undefined) {
    const [prior] = await sql<{ settings: string }[]>`
      select meta ->> 'settings' as settings from messages
      where conversation_id = ${conversationId} and seq < ${first.seq} and (meta ->> 'settings') is not null
      order by seq desc limit 1`;
    settings = prior?.settings;
  }
  return messages.map(({ meta }) => {
    if (typeof meta.settings === "string") settings = meta.settings;
    if (!isReply(meta)) return meta;
    const { state, events = [], fragments = [], ...rest } = meta;
    return {
      ...expand(CLINIC_STATE, state),
      events,
      fragments,
      ...rest,
      ...(settings !== undefined ? { settings } : {}),
    };
  });
}
