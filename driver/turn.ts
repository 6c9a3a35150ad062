import type { AnyStateMachine, EmittedFrom, EventFrom, SnapshotFrom } from "xstate";
import { pureInitialTransition, pureTransition } from "./pure";
import { appendMachineEvents } from "../storage/machine-events";
import { initEvent, machineLabel } from "./replay";
import type { Sql, Tx } from "../storage/db";
import { StaleVersionError } from "../storage/errors";
import { loadSnapshot, saveSnapshot, type SnapshotRow } from "../storage/snapshots";
import { AppError } from "./errors";
import { inSpan } from "./tracing";
import type { MachineSpec } from "./machine-spec";
import type { EventMap, Outcome, Run, RunEvent } from "./run";

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

export interface TurnArgs<M extends AnyStateMachine, E extends EventMap = EventMap> {
  sql: Sql;
  run: Run<E> | null;
  spec: MachineSpec<M>;
  /** Snapshot row key, e.g. the conversation id or an interaction id. */
  key: string;
  conversationId: string;
  input?: unknown;
  /**
   * The snapshot row as the caller already read it (null: none yet); absent → read here.
   * Read earlier or here, the commit's row-version check is what guards against a concurrent turn.
   */
  stored?: SnapshotRow | null;
  events: EventFrom<M>[];
  effects?: NoInfer<EffectHandlers<M>>;
  /** Extra writes of the same transaction (messages, projections). */
  commit?: (tx: Tx, snapshot: SnapshotFrom<M>) => Promise<void>;
  /** Events published only after the commit (e.g. `final`); `done` is added by the run. */
  closing?: (snapshot: SnapshotFrom<M>) => NoInfer<RunEvent<E>>[];
  outcome?: (snapshot: SnapshotFrom<M>) => Outcome;
  /**
   * A turn the machine itself declared void (e.g. it rests in a model-failure state): nothing is
   * written — no snapshot, log, messages or run completion; the caller answers the run.
   */
  discard?: (snapshot: SnapshotFrom<M>) => boolean;
  /** Bound on transitions per turn: a machine that keeps asking for effects is a bug, not a loop to wait out. */
  maxSteps?: number;
  /**
   * Log every event the machine is given this turn — the init event of a new snapshot, the
   * input events, the effects' results, in the order applied — to machine_events in the turn's
   * transaction, so the snapshot can be replayed from its log (driver/replay.ts), named by the
   * definition that took them (`machineLabel`; `settings` for a machine generated from settings).
   */
  log?: { settings?: string };
}

export interface TurnResult<M extends AnyStateMachine> {
  snapshot: SnapshotFrom<M>;
  rowVersion: number;
  steps: number;
  /** True when `discard` said so and nothing was written. */
  discarded?: boolean;
}

/** Restores a stored snapshot, upgrading or refusing one written by another machine version. */
export async function restore<M extends AnyStateMachine>(sql: Tx, spec: MachineSpec<M>, key: string) {
  return restoreRow(spec, key, await loadSnapshot(sql, key));
}

/** `restore` of a row the caller has already read (e.g. together with the rest of a turn's context). */
export function restoreRow<M extends AnyStateMachine>(spec: MachineSpec<M>, key: string, row: SnapshotRow | null) {
  if (!row) return null;
  if (row.machineId !== spec.id) {
    throw new AppError("internal", `State ${key} belongs to machine ${row.machineId}, not ${spec.id}.`);
  }
  let persisted = row.snapshot;
  if (row.machineVersion !== spec.version) {
    if (row.machineVersion > spec.version || !spec.migrate) {
      throw new AppError(
        "conflict",
        `Состояние диалога записано версией ${row.machineVersion} машины ${spec.id}, а сервер работает с версией ${spec.version} и не умеет её перенести.`,
        { reason: "snapshot_version", stored: row.machineVersion, current: spec.version },
      );
    }
    persisted = spec.migrate(persisted, row.machineVersion);
  }
  const snapshot = spec.machine.resolveState(persisted as never) as SnapshotFrom<M>;
  return { snapshot, rowVersion: row.rowVersion };
}

function emitted(actions: { type: string; params?: unknown }[]): { type: string; [k: string]: unknown }[] {
  return actions.filter((a) => a.type === "xstate.emit").map((a) => (a.params as { event: { type: string } }).event);
}

/**
 * The one path of every turn: load → pure transition → run the effects the machine asked
 * for → feed results back → one transaction (snapshot with version check, the caller's
 * writes, the run's events). Nothing is written if any step fails.
 */
export async function runTurn<M extends AnyStateMachine, E extends EventMap = EventMap>(
  a: TurnArgs<M, E>,
): Promise<TurnResult<M>> {
  const loaded = a.stored !== undefined ? restoreRow(a.spec, a.key, a.stored) : await restore(a.sql, a.spec, a.key);
  const signal = a.run?.signal ?? new AbortController().signal;
  let snapshot: SnapshotFrom<M>;
  const queue: unknown[] = [];
  let pending: { type: string; [k: string]: unknown }[] = [];
  // What the machine was given, in order: the turn's entry in the event log.
  const fed: unknown[] = [];
  if (loaded) snapshot = loaded.snapshot;
  else {
    const [s, actions] = pureInitialTransition(a.spec.machine, a.input as never);
    snapshot = s as SnapshotFrom<M>;
    pending = emitted(actions as never);
    fed.push(initEvent(a.input));
  }
  queue.push(...a.events);
  const max = a.maxSteps ?? 64;
  let steps = 0;
  for (;;) {
    // Effects first: their results are the machine's next events, ahead of later input.
    const results: unknown[] = [];
    for (const effect of pending) {
      const handler = (a.effects as Record<string, EffectHandler | undefined> | undefined)?.[effect.type];
      if (!handler)
        throw new AppError("internal", `machine ${a.spec.id} emitted ${effect.type} and nothing handles it`);
      if (signal.aborted) throw new AppError("internal", "client went away");
      const out = await handler(effect, { signal });
      if (out !== undefined) results.push(...(Array.isArray(out) ? out : [out]));
    }
    pending = [];
    queue.unshift(...results);
    const event = queue.shift();
    if (event === undefined) break;
    if (++steps > max) throw new AppError("internal", `machine ${a.spec.id} did not settle within ${max} steps`);
    fed.push(event);
    const [s, actions] = pureTransition(a.spec.machine, snapshot, event as never);
    snapshot = s as SnapshotFrom<M>;
    pending.push(...emitted(actions as never));
  }
  if (signal.aborted) throw new AppError("internal", "client went away");
  if (a.discard?.(snapshot)) return { snapshot, rowVersion: loaded?.rowVersion ?? 0, steps, discarded: true };

  const persisted = a.spec.machine.getPersistedSnapshot(snapshot);
  try {
    let publish: (() => void) | null = null;
    const closing = a.closing?.(snapshot) ?? [];
    const outcome = a.outcome?.(snapshot);
    const rowVersion = await inSpan("commit", { "machine.id": a.spec.id, "conversation.id": a.conversationId }, () =>
      a.sql.begin(async (tx) => {
        // The turn's writes go out together (one round trip, one socket write) and run in
        // order on the connection: the snapshot's version check first, so a concurrent turn
        // blocks there (and reads the event log's last seq only after it). A stale snapshot is seen on its result and rolls everything back.
        // All three settle before the transaction ends, so no statement is left to run on a
        // closed transaction; the first failure (the version check's, if any) is the turn's.
        const [v, logged, written, p] = await Promise.allSettled([
          saveSnapshot(tx, {
            key: a.key,
            conversationId: a.conversationId,
            machineId: a.spec.id,
            machineVersion: a.spec.version,
            snapshot: persisted,
            expectedRowVersion: loaded?.rowVersion ?? null,
          }),
          a.log
            ? appendMachineEvents(
                tx,
                a.key,
                a.conversationId,
                fed,
                a.run?.id ?? null,
                machineLabel(a.spec, a.log.settings),
              )
            : undefined,
          a.commit?.(tx, snapshot),
          a.run?.complete(tx, closing, outcome),
        ]);
        for (const r of [v, logged, written, p]) if (r.status === "rejected") throw r.reason;
        publish = (p as PromiseFulfilledResult<(() => void) | undefined>).value ?? null;
        return (v as PromiseFulfilledResult<number>).value;
      }),
    );
    (publish as (() => void) | null)?.();
    return { snapshot, rowVersion, steps };
  } catch (e) {
    if (e instanceof StaleVersionError) {
      throw new AppError("conflict", "Диалог уже изменён другим запросом; обновите состояние и повторите.", {
        key: a.key,
      });
    }
    throw e;
  }
}
