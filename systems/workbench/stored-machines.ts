import type { AnyStateMachine, EventFrom, SnapshotFrom } from "xstate";
import { pureInitialTransition, pureTransition } from "../../driver/pure";
import { restore, type MachineSpec } from "../../driver/turn";
import type { Tx } from "../../storage/db";
import { appendMachineEvents } from "../../storage/machine-events";
import { initEvent } from "../../driver/replay";
import { saveSnapshot } from "../../storage/snapshots";

/**
 * Inside a caller's transaction: restore a stored machine, apply one event, save it back with
 * the row-version check. For the machines a turn touches besides its own (the superseded
 * Interaction, the clarification being answered) — same pure transition, same optimistic lock.
 */
export async function transitionStored<M extends AnyStateMachine>(tx: Tx, spec: MachineSpec<M>, key: string, conversationId: string, event: EventFrom<M>): Promise<SnapshotFrom<M> | null> {
  const loaded = await restore(tx, spec, key);
  if (!loaded) return null;
  const [next] = pureTransition(spec.machine, loaded.snapshot, event as never);
  await saveSnapshot(tx, {
    key, conversationId, machineId: spec.id, machineVersion: spec.version,
    snapshot: spec.machine.getPersistedSnapshot(next), expectedRowVersion: loaded.rowVersion,
  });
  await appendMachineEvents(tx, key, conversationId, [event]);
  return next as SnapshotFrom<M>;
}

/** Creates a machine's first snapshot (insert; fails if the key exists). */
export async function createStored<M extends AnyStateMachine>(tx: Tx, spec: MachineSpec<M>, key: string, conversationId: string, input: unknown, runId: string | null = null): Promise<void> {
  const [snapshot] = pureInitialTransition(spec.machine, input as never);
  await saveSnapshot(tx, {
    key, conversationId, machineId: spec.id, machineVersion: spec.version,
    snapshot: spec.machine.getPersistedSnapshot(snapshot), expectedRowVersion: null,
  });
  await appendMachineEvents(tx, key, conversationId, [initEvent(input)], runId);
}


export const interactionKey = (id: string) => `interaction:${id}`;
export const clarificationKey = (id: string) => `clarification:${id}`;
