import { assign, emit, setup } from "xstate";
import type { MachineSpec } from "../../driver/machine-spec";

/**
 * A small dialogue machine for driver tests: each user message asks the model (an effect)
 * and counts turns. v2 added `history`; v1 snapshots are migrated on read.
 */
export const counterMachine = setup({
  types: {} as {
    context: { turns: number; last: string | null; history: string[] };
    events:
      | { type: "user.message"; text: string }
      | { type: "model.replied"; text: string }
      | { type: "model.failed"; message: string };
    emitted: { type: "effect.model"; prompt: string };
  },
}).createMachine({
  id: "counter",
  initial: "idle",
  context: { turns: 0, last: null, history: [] },
  states: {
    idle: {
      on: {
        "user.message": {
          target: "thinking",
          actions: [
            assign({ history: ({ context, event }) => [...context.history, event.text] }),
            emit(({ event }) => ({ type: "effect.model" as const, prompt: event.text })),
          ],
        },
      },
    },
    thinking: {
      on: {
        "model.replied": {
          target: "idle",
          actions: assign({ turns: ({ context }) => context.turns + 1, last: ({ event }) => event.text }),
        },
        "model.failed": { target: "idle" },
      },
    },
  },
});

export const counterSpec: MachineSpec<typeof counterMachine> = {
  id: "counter",
  version: 2,
  machine: counterMachine,
  migrate(persisted, from) {
    if (from !== 1) throw new Error(`no migration from counter v${from}`);
    const p = persisted as { context: Record<string, unknown> };
    return { ...p, context: { ...p.context, history: [] } };
  },
};
