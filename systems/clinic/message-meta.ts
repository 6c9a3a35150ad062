import type { Tx } from "../../storage/db";
import type { DialogueEmitted } from "./dialogue.machine";

/**
 * The meta of a turn's assistant message, as stored: the state after the turn (once — the run's
 * `final` refers to it, storage/runs.ts FINAL_OF_MESSAGE), what happened, what it was answered
 * from, and the settings versions that answered it — only when they differ from the ones the
 * thread's messages last named (`named`; migration 000021): they change when an operator edits
 * the settings, not turn by turn. `events` and `fragments` are left out when empty (most turns:
 * 27 bytes a turn of WAL, issue 19). The thread's views show every message whole (`clinicMessagesMeta`).
 */
export function assistantMeta(
  f: Extract<DialogueEmitted, { type: "clinic.final" }>,
  settings: string,
  named: string | null,
) {
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
 * stored before the state was kept whole (flat, naming its settings) is shown as it is.
 */
export async function clinicMessagesMeta(
  sql: Tx,
  conversationId: string,
  messages: { seq: number; meta: Record<string, unknown> }[],
): Promise<Record<string, unknown>[]> {
  const isReply = (meta: Record<string, unknown>) => !!meta.state && typeof meta.state === "object";
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
    return { ...(state as object), events, fragments, ...rest, ...(settings !== undefined ? { settings } : {}) };
  });
}
