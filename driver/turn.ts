import type { AnyStateMachine, EventFrom, SnapshotFrom } from "xstate";
import { settle, type EffectHandlers } from "./drive";
import { machineLabel } from "./replay";
import type { Fragment } from "postgres";
import type { Sql, Tx } from "../storage/db";
import { StaleVersionError } from "../storage/errors";
import { loadSnapshot, type SnapshotRow } from "../storage/snapshots";
import type { ReplyMessage } from "../storage/run-events-pack";
import { commitTurn, RunClosedError, type TurnCommit } from "../storage/turn-commit";
import { withinDeadline } from "../storage/deadline";
import { beginWithin } from "../storage/safe-begin";
import { AppError } from "./errors";
import { inSpan } from "./tracing";
import type { MachineSpec } from "./machine-spec";
import { runClosed, type EventMap, type Outcome, type Run, type RunEvent } from "./run";

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
  /**
   * The turn's own writes (messages, projections) as CTE bodies of its single commit statement
   * (storage/turn-commit.ts `writes`): each must write only when `when` holds.
   */
  writes?: (snapshot: SnapshotFrom<M>, when: Fragment) => (Fragment | null)[];
  /**
   * The messages `writes` stores under the run (its last of each role; the assistant's with its
   * meta): the log's events and the run's `final` that repeat them refer to them instead
   * (storage/machine-events.ts RunMessages, storage/runs.ts FINAL_OF_MESSAGE).
   */
  runMessages?: (snapshot: SnapshotFrom<M>) => { user?: string; assistant?: ReplyMessage } | undefined;
  /**
   * Writes that need a transaction (several dependent statements, a check that refuses the
   * turn, a row the statement's writes also change): sent right behind the commit statement, in
   * one transaction with it. A turn without them commits in one statement, with no BEGIN/COMMIT.
   */
  commit?: (tx: Tx, snapshot: SnapshotFrom<M>) => Promise<void>;
  /** Whether `commit` has anything to write for this snapshot (absent: it has, whenever given). */
  needsCommit?: (snapshot: SnapshotFrom<M>) => boolean;
  /** Events published only after the commit (e.g. `final`); `done` is added by the run. */
  closing?: (snapshot: SnapshotFrom<M>) => NoInfer<RunEvent<E>>[];
  outcome?: (snapshot: SnapshotFrom<M>) => Outcome;
  /**
   * A turn the machine itself declared void (e.g. it rests in a model-failure state): nothing is
   * written — no snapshot, log, messages or run completion; the caller answers the run.
   */
  discard?: (snapshot: SnapshotFrom<M>) => boolean;
  /** How long the commit may wait on the database; absent: the run's commit deadline (RunInit.deadlines). */
  commitTimeoutMs?: number;
  /** Bound on transitions per turn: a machine that keeps asking for effects is a bug, not a loop to wait out. */
  maxSteps?: number;
  /**
   * One writer at a time, nothing thrown away (issue 43): when the commit finds the snapshot moved
   * on (an operator took the thread while the model streamed), the turn is applied again, up to
   * this many times, on top of the snapshot as it is now — the same input events, and every
   * `effect.*` the machine asks for again answered with the results the first attempt got, in
   * order (no model is called twice; an effect not asked before runs for real). The machine decides
   * on the fresh state: a thread now held gets the holding reply, and the patient's words are
   * stored. Absent or 0: a stale commit is a 409, as before.
   */
  reapply?: number;
  /** Called before each re-application, with the snapshot the lost attempt had reached. */
  onReapply?: (lost: SnapshotFrom<M>) => void;
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

/**
 * The one path of every turn: load → pure transition → run the effects the machine asked
 * for → feed results back → one commit statement (snapshot with version check, the log, the
 * caller's writes, the run's events and end; storage/turn-commit.ts), in a transaction only
 * with the caller's `commit`. Nothing is written if any step fails. With `reapply`, a commit that
 * lost the version race is applied again on the fresh snapshot (see TurnArgs.reapply).
 */
export async function runTurn<M extends AnyStateMachine, E extends EventMap = EventMap>(
  a: TurnArgs<M, E>,
): Promise<TurnResult<M>> {
  let loaded = a.stored !== undefined ? restoreRow(a.spec, a.key, a.stored) : await restore(a.sql, a.spec, a.key);
  const signal = a.run?.signal ?? new AbortController().signal;
  // The results of the `effect.*` calls, per effect type in order: a re-application reuses them.
  const recorded = new Map<string, unknown[][]>();
  for (let attempt = 0; ; attempt++) {
    const { snapshot, fed, steps } = await settle({
      machine: a.spec.machine,
      id: a.spec.id,
      snapshot: loaded?.snapshot ?? null,
      input: a.input,
      events: a.events,
      maxSteps: a.maxSteps,
      effects: a.effects,
      signal,
      replay: attempt === 0 ? null : recorded,
      record: recorded,
    });
    if (a.discard?.(snapshot)) return { snapshot, rowVersion: loaded?.rowVersion ?? 0, steps, discarded: true };
    try {
      return await commitSettled(a, loaded, snapshot, fed, steps);
    } catch (e) {
      if (!(e instanceof StaleVersionError) || attempt >= (a.reapply ?? 0)) throw stale(a, e);
      a.onReapply?.(snapshot);
      a.run?.reopen();
      loaded = await restore(a.sql, a.spec, a.key);
    }
  }
}

/** One attempt's commit: throws StaleVersionError when the snapshot moved on since `loaded`. */
async function commitSettled<M extends AnyStateMachine, E extends EventMap>(
  a: TurnArgs<M, E>,
  loaded: { snapshot: SnapshotFrom<M>; rowVersion: number } | null,
  snapshot: SnapshotFrom<M>,
  fed: unknown[],
  steps: number,
): Promise<TurnResult<M>> {
  const persisted = a.spec.machine.getPersistedSnapshot(snapshot);
  const messages = a.runMessages?.(snapshot);
  const completion = a.run?.completion(a.closing?.(snapshot) ?? [], a.outcome?.(snapshot));
  const write: TurnCommit = {
    snapshot: {
      key: a.key,
      conversationId: a.conversationId,
      machineId: a.spec.id,
      machineVersion: a.spec.version,
      snapshot: persisted,
      expectedRowVersion: loaded?.rowVersion ?? null,
    },
    log: a.log
      ? {
          events: fed,
          runId: a.run?.id ?? null,
          machine: machineLabel(a.spec, a.log.settings),
          messages: messages && { user: messages.user, assistant: messages.assistant?.text },
        }
      : undefined,
    run:
      a.run && completion
        ? {
            id: a.run.id,
            conversationId: a.run.conversationId,
            events: completion.events,
            close: completion.close,
            notify: completion.notify,
            replyMessage: messages?.assistant,
          }
        : undefined,
    writes: a.writes ? (when) => a.writes!(snapshot, when) : undefined,
  };
  const commit = a.commit && (a.needsCommit?.(snapshot) ?? true) ? a.commit : null;
  // Bounded (issue 47): with the database away the turn ends with `error` + `done` within the
  // run's commit deadline; a statement still queued then is cancelled, a transaction rolls back.
  const commitMs = a.commitTimeoutMs ?? a.run?.deadlines.commitMs ?? 0;
  const cancel: { cancel?: () => void } = {};
  const rowVersion = await inSpan("commit", { "machine.id": a.spec.id, "conversation.id": a.conversationId }, () =>
    commit
      ? beginWithin(a.sql, commitMs, "turn commit", async (tx) => {
          // Sent together (one round trip) and run in order on the connection: the commit
          // statement with its version check first, so a concurrent turn blocks there before
          // the caller's writes. Both settle before the transaction ends (no statement left on
          // a closed transaction); the first failure — the version check's, if any — is the turn's.
          const [v, w] = await Promise.allSettled([commitTurn(tx, write), commit(tx, snapshot)]);
          if (v.status === "rejected") throw v.reason;
          if (w.status === "rejected") throw w.reason;
          return v.value;
        })
      : withinDeadline(commitMs, "turn commit", commitTurn(a.sql, write, cancel), () => cancel.cancel?.()),
  );
  completion?.publish();
  return { snapshot, rowVersion, steps };
}

/** A commit's failure as the turn reports it. */
function stale<M extends AnyStateMachine, E extends EventMap>(a: TurnArgs<M, E>, e: unknown): unknown {
  if (e instanceof RunClosedError) return runClosed(e.runId);
  if (e instanceof StaleVersionError)
    return new AppError("conflict", "Диалог уже изменён другим запросом; обновите состояние и повторите.", {
      key: a.key,
    });
  return e;
}
