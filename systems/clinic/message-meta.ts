import type { DialogueEmitted } from "./dialogue.machine";

/**
 * The meta of a turn's assistant message, as stored: the state after the turn (once — the run's
 * `final` refers to it, storage/runs.ts FINAL_OF_MESSAGE), what happened, what it was answered
 * from and with which settings. The thread's views show the state's fields flat (`clinicMessageMeta`).
 */
export function assistantMeta(f: Extract<DialogueEmitted, { type: "clinic.final" }>, settings: string) {
  return {
    state: f.state,
    events: f.events,
    fragments: f.fragments.map((x) => x.docId),
    settings,
    // Why a tail or a signal was not used (the Sandbox shows them on the turn's badges).
    ...(f.notes.length ? { notes: f.notes } : {}),
  };
}

/**
 * A stored assistant message's meta as the thread's views show it (CONTRACT §5: activeBranch,
 * step, events, fragments, settings): the state's fields flat beside the rest. A meta stored
 * before the state was kept whole (flat already) is shown as it is.
 */
export function clinicMessageMeta(meta: Record<string, unknown>): Record<string, unknown> {
  const { state, ...rest } = meta;
  return state && typeof state === "object" && !Array.isArray(state) ? { ...state, ...rest } : meta;
}
