import { and, assign, setup } from "xstate";
import { pureTransition } from "../../driver/pure";
import { blockedGuards, guardActive, isFilled, mergeSlots } from "./guards";
import type { BlockedGuard } from "./guards";
import type { Slots, StepGraph, StepSpec } from "./types";

/**
 * Generates the step machine of a stepped branch from its configuration: one state per step, one
 * transition per allowed_next entry, each behind the step's configured guards. Nothing here knows
 * the six booking steps; a different graph gives a different machine.
 */

export type StepOutcome =
  | { kind: "stayed"; step: string }
  | { kind: "moved"; from: string; to: string }
  | { kind: "rejected"; from: string; target: string }
  | { kind: "guard_blocked"; from: string; target: string; guards: BlockedGuard[] };

export interface StepContext {
  slots: Slots;
  outcome: StepOutcome | null;
}

/** The model's proposal, already parsed from STATE_JSON: where to go and which slots changed. */
export type StepEvent = { type: "step.propose"; target: string; slotsUpdated: Slots };

const merged = (context: StepContext, event: StepEvent) => mergeSlots(context.slots, event.slotsUpdated);

function buildSetup(graph: StepGraph) {
  const specs = new Map(graph.steps.map((s) => [s.code, s]));
  return setup({
    types: {} as { context: StepContext; events: StepEvent; input: { slots?: Slots } | undefined },
    guards: {
      targets: ({ event }, p: { step: string }) => event.target === p.step,
      // One named guard per configured guard, so diagrams and `xstate/graph` see them.
      slotGuard: ({ context, event }, p: { step: string; guard: string }) => {
        const g = specs.get(p.step)?.guards[p.guard];
        if (!g) return true;
        const slots = merged(context, event);
        return !guardActive(g, slots) || g.required_slots.every((s) => isFilled(slots[s]));
      },
    },
  });
}

type StepSetup = ReturnType<typeof buildSetup>;

function stepNode(s: StepSetup, spec: StepSpec) {
  const forward = spec.allowed_next.filter((n) => n !== spec.code);
  const guardNames = Object.keys(spec.guards);
  return {
    on: {
      "step.propose": [
        {
          guard: ({ event }: { event: StepEvent }) => event.target === spec.code,
          actions: assign(({ context, event }: { context: StepContext; event: StepEvent }) => ({
            slots: merged(context, event),
            outcome: { kind: "stayed", step: spec.code } as StepOutcome,
          })),
        },
        ...forward.map((to) => ({
          target: to,
          guard: and([{ type: "targets", params: { step: to } }, ...guardNames.map((g) => ({ type: "slotGuard", params: { step: spec.code, guard: g } }))]),
          actions: assign(({ context, event }: { context: StepContext; event: StepEvent }) => ({
            slots: merged(context, event),
            outcome: { kind: "moved", from: spec.code, to } as StepOutcome,
          })),
        })),
        // The target is allowed but a guard failed: stay, keep the new slots, say which guard.
        // A step without guards has no such branch: it could never be taken.
        ...(guardNames.length === 0 ? [] : forward).map((to) => ({
          guard: { type: "targets", params: { step: to } },
          actions: assign(({ context, event }: { context: StepContext; event: StepEvent }) => ({
            slots: merged(context, event),
            outcome: { kind: "guard_blocked", from: spec.code, target: to, guards: blockedGuards(spec, merged(context, event)) } as StepOutcome,
          })),
        })),
        // Not in allowed_next (a skipped step, an unknown step): the validator rejects it.
        {
          actions: assign(({ context, event }: { context: StepContext; event: StepEvent }) => ({
            slots: merged(context, event),
            outcome: { kind: "rejected", from: spec.code, target: event.target } as StepOutcome,
          })),
        },
      ],
    },
  };
}

export function createStepMachine(graph: StepGraph) {
  const s = buildSetup(graph);
  const states = Object.fromEntries(graph.steps.map((spec) => [spec.code, stepNode(s, spec)]));
  return s.createMachine({
    id: `steps.${graph.branch}.v${graph.version}`,
    initial: graph.initial ?? graph.steps[0]!.code,
    context: ({ input }) => ({ slots: input?.slots ?? {}, outcome: null }),
    // The generated node objects are plain config; xstate validates them at creation.
    states: states as never,
  });
}

export type StepMachine = ReturnType<typeof createStepMachine>;

const cache = new WeakMap<StepGraph, StepMachine>();
export function stepMachineFor(graph: StepGraph): StepMachine {
  let m = cache.get(graph);
  if (!m) cache.set(graph, (m = createStepMachine(graph)));
  return m;
}

/**
 * Runs one proposal through the generated machine as a pure transition, from a step and slots
 * held in the dialogue's context. The step machine is the only judge of which move is legal.
 */
export function proposeStep(graph: StepGraph, step: string, slots: Slots, target: string, slotsUpdated: Slots): { step: string; slots: Slots; outcome: StepOutcome } {
  const machine = stepMachineFor(graph);
  const from = machine.resolveState({ value: step, context: { slots, outcome: null } });
  const [next] = pureTransition(machine, from, { type: "step.propose", target, slotsUpdated });
  return { step: String(next.value), slots: next.context.slots, outcome: next.context.outcome ?? { kind: "stayed", step } };
}
