import { getAdjacencyMap, adjacencyMapToArray } from "xstate/graph";
import type { AnyStateMachine, AnyStateNode, EventObject, Snapshot } from "xstate";

/** Every transition a machine defines: `source|event|target` (target "(self)" when targetless). */
export function definedTransitions(machine: AnyStateMachine): Set<string> {
  const out = new Set<string>();
  const visit = (node: AnyStateNode) => {
    for (const [event, defs] of node.transitions) {
      defs.forEach((d, i) =>
        out.add(`${node.id}|${event}|${d.target?.map((t: AnyStateNode) => t.id).join(",") ?? "(self)"}|${i}`),
      );
    }
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  return out;
}

/**
 * Walks the machine with concrete events (guards see real payloads) and reports which defined
 * transitions some path takes. A step that changes nothing but has no targetless definition is a
 * rejected event (a guard said no), not a transition.
 */
export function transitionCoverage<M extends AnyStateMachine>(
  machine: M,
  opts: {
    input: unknown;
    events: (s: ReturnType<M["transition"]>) => EventObject[];
    serialize: (s: ReturnType<M["transition"]>) => string;
    stopWhen?: (s: ReturnType<M["transition"]>) => boolean;
  },
) {
  const adj = getAdjacencyMap(
    machine as never,
    {
      input: opts.input,
      events: opts.events as never,
      serializeState: (s: Snapshot<unknown>) => opts.serialize(s as never),
      serializeEvent: (e: EventObject) => JSON.stringify(e),
      ...(opts.stopWhen ? { stopWhen: opts.stopWhen as never } : {}),
    } as never,
  );
  const edges = adjacencyMapToArray(adj) as unknown as Array<{
    state: { value: unknown; status: string };
    event: EventObject;
    nextState: { value: unknown };
  }>;
  const defined = definedTransitions(machine);
  const covered = new Set<string>();
  for (const e of edges) {
    if (e.state.status !== "active") continue;
    const reached = leafIds(machine.id, e.nextState.value);
    // The transition taken is the deepest one defined for the event: the leaf's, then its ancestors'.
    const sourceIds = ancestry(leafIds(machine.id, e.state.value)[0]!);
    for (const src of sourceIds) {
      const node = src === machine.id ? machine.root : machine.getStateNodeById(src);
      const defs = node.transitions.get(e.event.type) ?? [];
      let hit = false;
      defs.forEach((d, i) => {
        if (hit) return;
        const target = d.target?.map((t: AnyStateNode) => t.id).join(",");
        const lands =
          target === undefined
            ? reached[0] === sourceIds[0]
            : reached.some((r) => r === target || r.startsWith(`${target}.`));
        if (lands) {
          covered.add(`${node.id}|${e.event.type}|${target ?? "(self)"}|${i}`);
          hit = true;
        }
      });
      if (hit) break;
    }
  }
  const missing = [...defined].filter((t) => !covered.has(t));
  return { defined: defined.size, covered: covered.size, missing, edges: edges.length };
}

/** The ids of the active leaf states of a state value (`{a: "b"}` → `m.a.b`). */
function leafIds(prefix: string, value: unknown): string[] {
  if (typeof value === "string") return [`${prefix}.${value}`];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => leafIds(`${prefix}.${k}`, v));
}

/** A state id and its ancestors' ids, up to the machine's. */
function ancestry(id: string): string[] {
  const parts = id.split(".");
  return parts.map((_, i) => parts.slice(0, parts.length - i).join("."));
}
