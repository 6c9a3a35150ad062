import type { AnyStateMachine, EmittedFrom, EventFrom, SnapshotFrom } from "xstate";
import { AppError } from "./errors";
import { pureInitialTransition, pureTransition } from "./pure";
import { initEvent } from "./replay";

/** What an effect handler gets besides its event (the run it reports to is in its closure, typed by its system). */
export interface EffectContext {
  signal: AbortSignal;
}

type Fed<M extends AnyStateMachine> = EventFrom<M> | EventFrom<M>[] | undefined | void;

/** An emitted event the driver must act on; returns the machine's events to feed back (in order). */
export type EffectHandler<M extends AnyStateMachine = AnyStateMachine, T extends EmittedFrom<M> = EmittedFrom<M>> = (
  effect: T,
  ctx: EffectContext,
) => Promise<Fed<M>> | Fed<M>;

/** A handler per event the machine emits, each typed by that event (`effect.router` → its fields). */
export type EffectHandlers<M extends AnyStateMachine> = {
  [K in EmittedFrom<M>["type"]]?: EffectHandler<M, Extract<EmittedFrom<M>, { type: K }>>;
};

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
 * pumps it answers the effects: `settle` with the system's handlers (model calls, SQL reads), a
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
const fedEvents = (r: unknown): unknown[] => (r === undefined ? [] : Array.isArray(r) ? r : [r]);

export interface SettleArgs<M extends AnyStateMachine> extends DriveArgs<M> {
  effects?: EffectHandlers<M>;
  /** The client's: once it is gone no handler is called, and the turn does not settle. */
  signal: AbortSignal;
  /** A re-application: what each effect type answered the first time, reused in order (no model is called twice). */
  replay: Map<string, unknown[][]> | null;
  /** Where this attempt's `effect.*` answers are kept, per effect type in order, for a re-application. */
  record: Map<string, unknown[][]>;
}

/**
 * One attempt of a turn: `drive` pumped until the machine rests, each effect it emits answered
 * by the system's handler — or, re-applied, by what that handler answered before.
 */
export async function settle<M extends AnyStateMachine>(a: SettleArgs<M>): Promise<Driven<M>> {
  // On a re-application, how many recorded results of each effect type were used so far.
  const used = new Map<string, number>();
  const answer = async (effect: Emitted): Promise<unknown[]> => {
    const handler = (a.effects as Record<string, EffectHandler | undefined> | undefined)?.[effect.type];
    if (!handler) throw new AppError("internal", `machine ${a.id} emitted ${effect.type} and nothing handles it`);
    if (a.signal.aborted) throw new AppError("internal", "client went away");
    const isEffect = effect.type.startsWith("effect.");
    const n = used.get(effect.type) ?? 0;
    const earlier = isEffect && a.replay ? a.replay.get(effect.type)?.[n] : undefined;
    if (earlier) {
      used.set(effect.type, n + 1);
      return earlier;
    }
    const out = fedEvents(await handler(effect as never, { signal: a.signal }));
    if (isEffect) {
      a.record.set(effect.type, [...(a.record.get(effect.type) ?? []), out]);
      used.set(effect.type, a.record.get(effect.type)!.length);
    }
    return out;
  };
  const loop = drive(a);
  let step = loop.next([]);
  while (!step.done) step = loop.next(await answer(step.value));
  if (a.signal.aborted) throw new AppError("internal", "client went away");
  return step.value;
}
