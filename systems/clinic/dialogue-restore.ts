import type { AnyStateMachine } from "xstate";
import { HumanHold } from "./human";
import { validStep } from "./turn-logic";
import { initialClinicState } from "./types";
import type { ClinicState, Registry } from "./types";

/**
 * Restoring the clinic dialogue machine: its position is read from the thread state (the machine
 * is generated from settings that may have changed since), and older snapshots are migrated.
 */

export const MACHINE_ID = "clinicDialogue";
/** The history state of a stepped branch; upper case, so no configured (lower_snake_case) step can be named so. */
export const HISTORY = "H";

/** The `patient` region's value for a thread state: the branch, and the step of a stepped branch. */
export function patientValue(state: ClinicState): string | Record<string, string> {
  if (state.activeBranch === null) return "unrouted";
  return state.step === null ? state.activeBranch : { [state.activeBranch]: state.step };
}

interface Persisted {
  value?: unknown;
  context?: { state?: ClinicState; turn?: unknown; human?: unknown; assignee?: unknown };
  historyValue?: Record<string, { id: string }[]>;
  [k: string]: unknown;
}

/**
 * Every restore (the driver's, replay's across settings versions) goes through `resolveState`;
 * the machine is generated from settings that may have changed since the snapshot was written,
 * so the position is read from the thread state (a step gone from the graph falls back to the
 * initial one, as the router stage did in v1) and history entries naming gone states are dropped.
 * xstate's `resolveState` takes history as stored ids; it is revived to state nodes here.
 */
export function guardRestore(machine: AnyStateMachine, registry: Registry): void {
  const resolve = machine.resolveState.bind(machine);
  const node = (id: string) => {
    try {
      return machine.getStateNodeById(id);
    } catch {
      return null;
    }
  };
  machine.resolveState = ((config: Persisted) => {
    const state = config.context?.state;
    if (!state) return resolve(config as never);
    const fixed: ClinicState = {
      ...state,
      step: state.activeBranch === null ? state.step : validStep(registry, state.activeBranch, state.step),
    };
    const turnValue = (config.value as { turn?: unknown } | undefined)?.turn;
    const historyValue = Object.fromEntries(
      Object.entries(config.historyValue ?? {})
        .map(([id, list]) => [id, node(id) ? list.map((n) => node(typeof n === "string" ? n : n.id)) : []] as const)
        .filter(([, list]) => list.length > 0 && list.every(Boolean)),
    );
    const human = HumanHold.safeParse(config.context?.human);
    return resolve({
      ...config,
      value: {
        patient: patientValue(fixed),
        turn: typeof turnValue === "string" ? turnValue : "idle",
        handler: human.success ? "human" : "bot",
      },
      context: {
        ...config.context,
        state: fixed,
        human: human.success ? human.data : null,
        assignee: typeof config.context?.assignee === "string" ? config.context.assignee : null,
      },
      historyValue,
    } as never);
  }) as typeof machine.resolveState;
}

/**
 * v1 → v2: a v1 snapshot rests in `idle` with the thread state in context; v2 reads the branch and
 * step from it, and a suspended stepped scenario becomes its branch's history (where a resume goes).
 * v2 → v3: the `handler` region; a thread is with a human when its context names one (migration
 * 000029 wrote `context.human` into the snapshots of threads an operator had taken before).
 * v3 → v4: `assignee` (toV4).
 */
export function migrateClinicDialogue(persisted: unknown, fromVersion: number): unknown {
  if (fromVersion === 3) return toV4(persisted as Persisted);
  if (fromVersion === 2) return toV4(toV3(persisted as Persisted));
  if (fromVersion !== 1) throw new Error(`clinic-dialogue: no migration from version ${fromVersion}`);
  const p = persisted as Persisted;
  const state = p.context?.state ?? initialClinicState();
  const s = state.suspended;
  const historyValue =
    s && s.step !== null
      ? { [`${MACHINE_ID}.patient.${s.intent}.${HISTORY}`]: [{ id: `${MACHINE_ID}.patient.${s.intent}.${s.step}` }] }
      : {};
  return toV4(
    toV3({
      ...p,
      value: { patient: patientValue(state), turn: "idle" },
      context: { state, turn: null, human: p.context?.human },
      historyValue,
    }),
  );
}

/** v3 → v4 (issue 43): the assignee — a held thread is its holder's, as a take assigns it; else nobody's. */
function toV4(p: Persisted): Persisted {
  const human = HumanHold.safeParse(p.context?.human);
  return { ...p, context: { ...p.context, assignee: human.success ? human.data.operator : null } };
}

function toV3(p: Persisted): Persisted {
  const human = HumanHold.safeParse(p.context?.human);
  const value = { ...(p.value as object), handler: human.success ? "human" : "bot" };
  return { ...p, value, context: { ...p.context, human: human.success ? human.data : null } };
}
