import { and, setup } from "xstate";
import { assign } from "../../driver/assign";
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

/**
 * How a machine holding a step graph reads its slots and records a judged proposal: the step
 * machine below keeps them at the top of its context, the clinic dialogue (which nests the same
 * generated states inside its stepped branch) in its thread state.
 */
export interface StepHost<C> {
  slots: (context: C) => Slots;
  settle: (context: C, slots: Slots, outcome: StepOutcome) => Partial<C>;
}

/** Finds the configured step a guard's params name (`branch` is there when a machine nests several graphs). */
export type StepLookup = (params: { branch?: string; step: string }) => StepSpec | undefined;

/** The named guards of generated step states; `targets(step)` and `slotGuard(step, guard)` in diagrams. */
export function stepGuards<C>(lookup: StepLookup, host: StepHost<C>) {
  return {
    targets: ({ event }: { event: { type: string } }, p: { step: string }) => (event as StepEvent).target === p.step,
    // One named guard per configured guard, so diagrams and `xstate/graph` see them.
    slotGuard: (
      { context, event }: { context: C; event: { type: string } },
      p: { branch?: string; step: string; guard: string },
    ) => {
      const g = lookup(p)?.guards[p.guard];
      if (!g) return true;
      const slots = mergeSlots(host.slots(context), (event as StepEvent).slotsUpdated);
      return !guardActive(g, slots) || g.required_slots.every((s) => isFilled(slots[s]));
    },
  };
}

/**
 * The states of a step graph: one per step, one guarded transition per allowed_next entry,
 * staying, a blocked guard and a rejected target as targetless transitions that record the
 * outcome. `scope` is added to every guard's params (the branch, for a machine nesting graphs).
 */
export function stepStates<C>(
  graph: StepGraph,
  host: StepHost<C>,
  scope: { branch?: string } = {},
): Record<string, object> {
  const settle = (outcome: (context: C, event: StepEvent, slots: Slots) => StepOutcome) =>
    assign(({ context, event }: { context: C; event: StepEvent }) => {
      const slots = mergeSlots(host.slots(context), event.slotsUpdated);
      return host.settle(context, slots, outcome(context, event, slots)) as never;
    });
  const node = (spec: StepSpec) => {
    const forward = spec.allowed_next.filter((n) => n !== spec.code);
    const guardNames = Object.keys(spec.guards);
    return {
      on: {
        "step.propose": [
          {
            guard: ({ event }: { event: StepEvent }) => event.target === spec.code,
            actions: settle(() => ({ kind: "stayed", step: spec.code })),
          },
          ...forward.map((to) => ({
            target: to,
            guard: and([
              { type: "targets", params: { step: to } },
              ...guardNames.map((g) => ({ type: "slotGuard", params: { ...scope, step: spec.code, guard: g } })),
            ]),
            actions: settle(() => ({ kind: "moved", from: spec.code, to })),
          })),
          // The target is allowed but a guard failed: stay, keep the new slots, say which guard.
          // A step without guards has no such branch: it could never be taken.
          ...(guardNames.length === 0 ? [] : forward).map((to) => ({
            guard: { type: "targets", params: { step: to } },
            actions: settle((_c, _e, slots) => ({
              kind: "guard_blocked",
              from: spec.code,
              target: to,
              guards: blockedGuards(spec, slots),
            })),
          })),
          // Not in allowed_next (a skipped step, an unknown step): the validator rejects it.
          { actions: settle((_c, event) => ({ kind: "rejected", from: spec.code, target: event.target })) },
        ],
      },
    };
  };
  return Object.fromEntries(graph.steps.map((spec) => [spec.code, node(spec)]));
}

const ownSlots: StepHost<StepContext> = { slots: (c) => c.slots, settle: (_c, slots, outcome) => ({ slots, outcome }) };

function buildSetup(graph: StepGraph) {
  const specs = new Map(graph.steps.map((s) => [s.code, s]));
  return setup({
    types: {} as { context: StepContext; events: StepEvent; input: { slots?: Slots } | undefined },
    guards: stepGuards((p) => specs.get(p.step), ownSlots),
  });
}

export function createStepMachine(graph: StepGraph) {
  return buildSetup(graph).createMachine({
    id: `steps.${graph.branch}.v${graph.version}`,
    initial: graph.initial ?? graph.steps[0]!.code,
    context: ({ input }) => ({ slots: input?.slots ?? {}, outcome: null }),
    // The generated node objects are plain config; xstate validates them at creation.
    states: stepStates(graph, ownSlots) as never,
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
export function proposeStep(
  graph: StepGraph,
  step: string,
  slots: Slots,
  target: string,
  slotsUpdated: Slots,
): { step: string; slots: Slots; outcome: StepOutcome } {
  const machine = stepMachineFor(graph);
  const from = machine.resolveState({ value: step, context: { slots, outcome: null } });
  const [next] = pureTransition(machine, from, { type: "step.propose", target, slotsUpdated });
  return {
    step: String(next.value),
    slots: next.context.slots,
    outcome: next.context.outcome ?? { kind: "stayed", step },
  };
}
