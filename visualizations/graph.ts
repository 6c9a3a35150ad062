import type { AnyStateMachine } from "xstate";

/**
 * A machine's structure read from the machine object itself (`machine.root`): states, their
 * nesting, and every transition with its event and guard. Diagrams are drawn from this and
 * nothing else, so a picture can never disagree with the code it shows.
 */

export type NodeKind = "atomic" | "compound" | "parallel" | "final" | "history";

export interface DiagramNode {
  /** The state node's id, e.g. `clinicDialogue.routing`. */
  id: string;
  key: string;
  kind: NodeKind;
  parent: string | null;
  children: string[];
  /** Id of the initial child (compound states). */
  initial: string | null;
  description: string | null;
  tags: string[];
  /** Transitions that do not leave the state (no target): listed inside the node. */
  internal: DiagramEdge[];
}

export interface DiagramEdge {
  id: string;
  source: string;
  /** The target state ids; empty for a targetless (internal) transition. */
  targets: string[];
  /** Event type; `always` for eventless transitions. */
  event: string;
  guard: string | null;
  actions: string[];
  /** Position among the source's transitions for this event: the order guards are tried in. */
  order: number;
}

export interface MachineGraph {
  machineId: string;
  root: string;
  nodes: Map<string, DiagramNode>;
  /** Transitions with a target (internal ones are on their node). */
  edges: DiagramEdge[];
}

type AnyGuard = unknown;
type AnyTransition = {
  target?: { id: string }[] | undefined;
  guard?: AnyGuard;
  actions?: unknown[];
  eventType: string;
};
type AnyStateNode = {
  id: string;
  key: string;
  type: string;
  description?: string;
  tags?: string[];
  states: Record<string, AnyStateNode>;
  transitions: Map<string, AnyTransition[]>;
  always?: AnyTransition[];
  initial?: { target: { id: string }[] };
};

const paramText = (params: unknown): string => {
  if (params === undefined || params === null) return "";
  if (typeof params !== "object") return String(params);
  return Object.values(params as Record<string, unknown>)
    .map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v)))
    .join(", ");
};

/** A guard as readable text: `name`, `name(params)`, `and(a, b)`, `not(a)`, `in(state)`. */
export function describeGuard(guard: AnyGuard): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === "string") return guard;
  if (typeof guard === "function") {
    const g = guard as { name?: string; guards?: AnyGuard[]; stateValue?: unknown };
    // and(x) of a single guard says no more than x.
    if (Array.isArray(g.guards) && g.guards.length === 1 && g.name !== "not") return describeGuard(g.guards[0]);
    if (Array.isArray(g.guards))
      return `${g.name || "guard"}(${g.guards.map((x) => describeGuard(x) ?? "?").join(", ")})`;
    if (g.stateValue !== undefined)
      return `in(${typeof g.stateValue === "string" ? g.stateValue : JSON.stringify(g.stateValue)})`;
    // An inline arrow assigned to `guard:` is named "guard" by the engine: say it is inline.
    return g.name && g.name !== "guard" ? g.name : "inline";
  }
  if (typeof guard === "object") {
    const g = guard as { type?: string; params?: unknown };
    const p = paramText(g.params);
    return p ? `${g.type}(${p})` : String(g.type);
  }
  return String(guard);
}

function describeAction(a: unknown): string | null {
  if (!a) return null;
  if (typeof a === "string") return a;
  if (typeof a === "function") {
    const f = a as { type?: string; name?: string };
    // Built-in action creators carry their kind in `type` (xstate.assign, xstate.emit …).
    if (f.type) return f.type.replace(/^xstate\./, "");
    return f.name || null;
  }
  if (typeof a === "object") return String((a as { type?: unknown }).type ?? "action");
  return null;
}

/** Engine-generated event names in the words of the machine's config (onDone, after …). */
export function prettyEvent(event: string): string {
  if (event.startsWith("xstate.done.state.")) return "onDone";
  let m = /^xstate\.after\.(\d+)\./.exec(event);
  if (m) return `after ${m[1]} ms`;
  m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
  if (m) return `${m[1] === "done" ? "onDone" : "onError"}: ${m[2]}`;
  return event;
}

/** Walks `machine.root` depth-first in document order. */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const root = machine.root as unknown as AnyStateNode;
  const nodes = new Map<string, DiagramNode>();
  const edges: DiagramEdge[] = [];
  let n = 0;

  const visit = (s: AnyStateNode, parent: string | null) => {
    const kind: NodeKind =
      s.type === "parallel"
        ? "parallel"
        : s.type === "final"
          ? "final"
          : s.type === "history"
            ? "history"
            : Object.keys(s.states).length
              ? "compound"
              : "atomic";
    const node: DiagramNode = {
      id: s.id,
      key: s.key,
      kind,
      parent,
      children: Object.values(s.states).map((c) => c.id),
      initial: kind === "compound" ? (s.initial?.target?.[0]?.id ?? null) : null,
      description: s.description ?? null,
      tags: [...(s.tags ?? [])],
      internal: [],
    };
    nodes.set(s.id, node);
    const add = (event: string, list: AnyTransition[]) => {
      list.forEach((t, order) => {
        const e: DiagramEdge = {
          id: `e${n++}`,
          source: s.id,
          targets: (t.target ?? []).map((x) => x.id),
          event,
          guard: describeGuard(t.guard),
          actions: (t.actions ?? []).map(describeAction).filter((x): x is string => !!x),
          order,
        };
        if (e.targets.length === 0) node.internal.push(e);
        else edges.push(e);
      });
    };
    for (const [event, list] of s.transitions) add(prettyEvent(event), list);
    if (s.always?.length) add("always", s.always);
    for (const child of Object.values(s.states)) visit(child, s.id);
  };
  visit(root, null);
  return { machineId: root.id, root: root.id, nodes, edges };
}

/** The state node ids a state value stands for (`"idle"`, `{a: "b"}`, `{p: {x: "y"}}`), with their ancestors. */
export function activeStateIds(graph: MachineGraph, value: unknown): Set<string> {
  const out = new Set<string>([graph.root]);
  // Children are matched by key, not by id: a state may carry an explicit id of its own.
  const child = (parentId: string, key: string) =>
    graph.nodes.get(parentId)?.children.find((c) => graph.nodes.get(c)?.key === key);
  const walk = (parentId: string, v: unknown) => {
    if (typeof v === "string") {
      const id = child(parentId, v);
      if (id) out.add(id);
      return;
    }
    if (v && typeof v === "object") {
      for (const [k, sub] of Object.entries(v as Record<string, unknown>)) {
        const id = child(parentId, k);
        if (!id) continue;
        out.add(id);
        walk(id, sub);
      }
    }
  };
  walk(graph.root, value);
  return out;
}
