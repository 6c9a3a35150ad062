import type { AnyStateMachine } from "xstate";
import { pureInitialTransition, pureTransition } from "../machines/pure";

/** The first entry of a machine's event log: the input it was created with. */
export const initEvent = (input: unknown) => ({ type: "xstate.init", input });

/**
 * A machine's logged events (machine_events, oldest first) replayed through the pure machine:
 * the persisted snapshot they lead to, in its stored (JSON) form. Equal to the stored snapshot
 * when the log is complete and the machine definition is the one that took the events.
 */
export function replayEvents(machine: AnyStateMachine, events: unknown[]): unknown {
  const [first, ...rest] = events as { type?: string; input?: unknown }[];
  if (first?.type !== "xstate.init") throw new Error("a machine's event log starts with its xstate.init event");
  let [s] = pureInitialTransition(machine, first.input as never);
  for (const e of rest) [s] = pureTransition(machine, s, e as never);
  return JSON.parse(JSON.stringify(machine.getPersistedSnapshot(s)));
}

/** A logged event with the label of the machine definition that took it. */
export interface LogEntry {
  event: unknown;
  machine: string | null;
}

export type ReplayResult = { ok: true; snapshot: unknown } | { ok: false; reason: string };

/**
 * Replays a log whose turns may have run on different definitions (a generated machine whose
 * settings changed between turns): each entry goes through the machine its label names, and
 * where the label changes the state carries over as a persisted snapshot, as the driver's own
 * restore does. `machines` maps every label in the log to its definition (null: not available).
 */
export function replayLog(log: LogEntry[], machines: (label: string | null) => AnyStateMachine | null): ReplayResult {
  const first = log[0]?.event as { type?: string; input?: unknown } | undefined;
  if (first?.type !== "xstate.init") return { ok: false, reason: "the log does not start with xstate.init" };
  let machine: AnyStateMachine | null = null;
  let s: unknown = null;
  for (const entry of log) {
    const m = machines(entry.machine);
    if (!m) return { ok: false, reason: `machine ${entry.machine ?? "(unnamed)"} is not available to replay with` };
    if (machine === null) [s] = pureInitialTransition(m, first.input as never);
    else {
      if (m !== machine) s = m.resolveState(JSON.parse(JSON.stringify(machine.getPersistedSnapshot(s as never))) as never);
      [s] = pureTransition(m, s as never, entry.event as never);
    }
    machine = m;
  }
  return { ok: true, snapshot: JSON.parse(JSON.stringify(machine!.getPersistedSnapshot(s as never))) };
}
