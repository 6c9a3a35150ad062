import type { AnyStateMachine } from "xstate";

/**
 * A machine as the driver persists it: its id and version are stored beside every snapshot.
 * Its own file so a pure machine can name its spec without importing the driver's I/O.
 */
export interface MachineSpec<M extends AnyStateMachine = AnyStateMachine> {
  id: string;
  version: number;
  machine: M;
  /** Upgrades a persisted snapshot written by an older version; absent → such snapshots are refused. */
  migrate?: (persisted: unknown, fromVersion: number) => unknown;
  /**
   * The oldest logged version whose events this version replays (a rewrite that kept the behaviour);
   * absent → a log replays only through its own version.
   */
  replaysFrom?: number;
  /** Snapshot fields an older version never recorded: left out when a log begun before this version is compared. */
  unrecordedBefore?: readonly string[];
}
