import type { AnyStateMachine, EventFrom, SnapshotFrom } from "xstate";
import type { Tx } from "../storage/db";
import { appendMachineEvents } from "../storage/machine-events";
import { saveSnapshot } from "../storage/snapshots";
import type { MachineSpec } from "./machine-spec";
import { pureTransition } from "./pure";
import { restore } from "./turn";

/**
 * The machines a turn touches besides its own (Workbench: the Interaction a new request
 * supersedes), inside the caller's transaction: the same pure transition,
 * the same optimistic lock and the same event log as `runTurn`, without its effect loop —
 * a side machine takes one event and asks for nothing.
 */

/** Restores a stored machine, applies one event, saves it back with the row-version check; null if none is stored. */
export async function transitionStored<M extends AnyStateMachine>(
  tx: Tx,
  spec: MachineSpec<M>,
  key: string,
  conversationId: string,
  event: EventFrom<M>,
): Promise<SnapshotFrom<M> | null> {
  const loaded = await restore(tx, spec, key);
  if (!loaded) return null;
  const [next] = pureTransition(spec.machine, loaded.snapshot, event as never);
  await saveSnapshot(tx, {
    key,
    conversationId,
    machineId: spec.id,
    machineVersion: spec.version,
    snapshot: spec.machine.getPersistedSnapshot(next),
    expectedRowVersion: loaded.rowVersion,
  });
  await appendMachineEvents(tx, key, conversationId, [event]);
  return next as SnapshotFrom<M>;
}
