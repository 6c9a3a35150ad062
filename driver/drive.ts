import type { AnyStateMachine, EventFrom, SnapshotFrom } from "xstate";
import { AppError } from "./errors";
import { pureInitialTransition, pureTransition } from "./pure";
import { initEvent } from "./replay";

/** An event the machine emitted: an `effect.*` to answer, or a report (a `final`, a stage) to take note of. */
export type Emitted = { type: string; [k: string]: unknown };

export interface Driven<M extends AnyStateMachine> {
  snapshot: SnapshotFrom<M>;
  /** What the machine was given, in order (the init event of a new snapshot first): the turn's log entry. */
  fed: unknown[];
  steps: number;
}

export interface DriveArgs<M extends AnyStateMachine> {
  machine: M;
  /** Names the machine in the error of a turn that does not settle. */
  id: string;
  /** The restored snapshot; null: a new one from `input`. */
  snapshot: SnapshotFrom<M> | null;
  input?: unknown;
  events: EventFrom<M>[];
  /** Bound on transitions: a machine that keeps asking for effects is a bug, not a loop to wait out. */
  maxSteps?: number;
}

function emitted(actions: { type: string; params?: unknown }[]): Emitted[] {
  return actions.filter((a) => a.type === "xstate.emit").map((a) => (a.params as { event: Emitted }).event);
}

/**
 * The one loop of a turn, pure: transition → yield each event the machine emitted → take the
 * events its answer feeds back (ahead of later input) → repeat until the machine rests. Whoever
 * pumps it answers the effects: runTurn with the system's handlers (model calls, SQL reads), a
 * test with a script — both run this very loop.
 */
export function* drive<M extends AnyStateMachine>(a: DriveArgs<M>): Generator<Emitted, Driven<M>, unknown[]> {
  const fed: unknown[] = [];
  const start = a.snapshot ? null : pureInitialTransition(a.machine, a.input as never);
  let snapshot = (a.snapshot ?? start![0]) as SnapshotFrom<M>;
  let pending = start ? emitted(start[1] as never) : [];
  if (start) fed.push(initEvent(a.input));
  const queue: unknown[] = [...a.events];
  const max = a.maxSteps ?? 64;
  let steps = 0;
  for (;;) {
    // Effects first: their results are the machine's next events, ahead of later input.
    const results: unknown[] = [];
    for (const effect of pending) results.push(...(yield effect));
    queue.unshift(...results);
    const event = queue.shift();
    if (event === undefined) return { snapshot, fed, steps };
    if (++steps > max) throw new AppError("internal", `machine ${a.id} did not settle within ${max} steps`);
    fed.push(event);
    const [s, actions] = pureTransition(a.machine, snapshot, event as never);
    snapshot = s as SnapshotFrom<M>;
    pending = emitted(actions as never);
  }
}

/** A handler's answer as the loop takes it: nothing, one event or several. */
export const fedEvents = (r: unknown): unknown[] => (r === undefined ? [] : Array.isArray(r) ? r : [r]);
