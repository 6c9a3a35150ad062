import type { AnyMachineSnapshot, AnyStateMachine } from "xstate";

/**
 * `machine.resolveState` with the state nodes of each stored state value worked out once
 * (issue 46). Stock `resolveState` resolves the value against the machine and walks the active
 * configuration three times (xstate internals) — 17–21 µs of a clinic turn's restore — and
 * what it works out depends only on the value (and on the stored status, for a final state):
 * the nodes, their order, the normalised value, the tags, the status. That part is kept per
 * value, as stock `resolveState` made it; the rest (context, history, output, error) is the
 * stored snapshot's, as stock puts it. A value the machine does not have is refused by stock
 * `resolveState`, as before, and not kept. Bounded: a machine has few resting values.
 */

const MAX_SHAPES = 512;

/** Replaces `machine.resolveState`; call before anything wraps it (the clinic's guardRestore does). */
export function memoizeResolve(machine: AnyStateMachine): void {
  const stock = machine.resolveState.bind(machine);
  const shapes = new Map<string, AnyMachineSnapshot>();
  machine.resolveState = ((config: {
    value: unknown;
    status?: string;
    context?: unknown;
    historyValue?: unknown;
    output?: unknown;
    error?: unknown;
  }) => {
    const key = `${config.status ?? ""}|${JSON.stringify(config.value)}`;
    let shape = shapes.get(key);
    if (!shape) {
      shape = stock({ value: config.value, status: config.status } as never) as AnyMachineSnapshot;
      if (shapes.size >= MAX_SHAPES) shapes.clear();
      shapes.set(key, shape);
    }
    return {
      ...shape,
      _nodes: [...shape._nodes],
      value: copy(shape.value),
      tags: new Set(shape.tags),
      context: config.context || {},
      children: {},
      output: config.output,
      error: config.error,
      historyValue: config.historyValue || {},
    };
  }) as typeof machine.resolveState;
}

/** A state value is strings in nested plain objects. */
function copy<T>(v: T): T {
  if (typeof v !== "object" || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = copy((v as Record<string, unknown>)[k]);
  return out as T;
}
