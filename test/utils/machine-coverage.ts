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
    const sourceIds = [`${machine.id}.${String(e.state.value)}`, machine.id];
    for (const src of sourceIds) {
      const node = src === machine.id ? machine.root : machine.getStateNodeById(src);
      const defs = node.transitions.get(e.event.type) ?? [];
      let hit = false;
      defs.forEach((d, i) => {
        if (hit) return;
        const target = d.target?.map((t: AnyStateNode) => t.id).join(",");
        const reached = `${machine.id}.${String(e.nextState.value)}`;
        if ((target === undefined && reached === sourceIds[0]) || target === reached) {
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
