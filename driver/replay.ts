import type { AnyStateMachine } from "xstate";
import { pureInitialTransition, pureTransition } from "./pure";

/** The first entry of a machine's event log: the input it was created with. */
export const initEvent = (input: unknown) => ({ type: "xstate.init", input });

/**
 * How the event log names the definition that took an event: "<machine id>@<version>", and for
 * a machine generated from settings (the clinic dialogue) "|<settings versions>" after it.
 */
export function machineLabel(spec: { id: string; version: number }, settings?: string): string {
  return settings ? `${spec.id}@${spec.version}|${settings}` : `${spec.id}@${spec.version}`;
}

export function parseMachineLabel(label: string): { id: string; version: number; settings: string | null } | null {
  const m = /^([^@|]+)@(\d+)(?:\|(.*))?$/.exec(label);
  return m ? { id: m[1]!, version: Number(m[2]), settings: m[3] ?? null } : null;
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
      if (m !== machine)
        s = m.resolveState(JSON.parse(JSON.stringify(machine.getPersistedSnapshot(s as never))) as never);
      [s] = pureTransition(m, s as never, entry.event as never);
    }
    machine = m;
  }
  return { ok: true, snapshot: JSON.parse(JSON.stringify(machine!.getPersistedSnapshot(s as never))) };
}
