import type { AnyStateMachine } from "xstate";

/**
 * A machine the project runs, as something that can be drawn: how to build it (a machine
 * generated from settings closes over the settings it was listed for), which stored snapshot
 * shows a conversation's position in it, and how to read that position. Each dialogue system
 * lists its own (`DialogueSystem.diagrams`); `machineCatalog` in driver/system.ts joins them.
 */

export interface Position {
  /** A state value of this machine. */
  value: unknown;
  caption: string;
}

export interface MachineEntry {
  /** URL id: `/v1/machines/{id}/diagram`. */
  id: string;
  title: string;
  description: string;
  conversationKind: string;
  /** `machine_id` of the stored snapshot that tells where a conversation is. */
  snapshotMachineId: string;
  build(): AnyStateMachine;
  /** Reads the position from that snapshot (null: the conversation is not in this machine now). */
  position(snapshot: { value?: unknown; context?: Record<string, unknown> }, key: string): Position | null;
}
