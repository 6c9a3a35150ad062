import { assign, emit, setup } from "xstate";
import type { MachineSpec } from "../../../driver/machine-spec";

/** The test-only fourth system's machine: one state; a message asks the model (an effect) to echo it. */
export const echoMachine = setup({
  types: {} as {
    context: { turns: number; last: string | null };
    events: { type: "user.message"; text: string } | { type: "echo.replied"; text: string };
    emitted: { type: "effect.echo"; text: string };
  },
}).createMachine({
  id: "echo",
  initial: "ready",
  context: { turns: 0, last: null },
  states: {
    ready: {
      on: {
        "user.message": { actions: emit(({ event }) => ({ type: "effect.echo" as const, text: event.text })) },
        "echo.replied": {
          actions: assign({ turns: ({ context }) => context.turns + 1, last: ({ event }) => event.text }),
        },
      },
    },
  },
});

export const echoSpec: MachineSpec<typeof echoMachine> = { id: "echo", version: 1, machine: echoMachine };
