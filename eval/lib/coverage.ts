import type { AnyStateMachine, AnyStateNode } from "xstate";

/**
 * Transition coverage of the machines by a dataset. The server's machines never run as actors —
 * every turn is a pure `transition()` — so the eval (running the server in its own process)
 * listens on the one thing every such call goes through: `StateMachine.prototype.transition` and
 * `getInitialSnapshot`, each of which runs its macrostep under an inert actor system whose
 * inspection events name the transitions taken (`@xstate.microstep`, eventless ones included).
 * Nothing in the product changes; the hook is installed by the eval only.
 */

interface TransitionDef {
  source: AnyStateNode;
  eventType: string;
  target?: readonly AnyStateNode[] | undefined;
  meta?: { replayOnly?: boolean };
}

const keyOf = (node: AnyStateNode, eventType: string, target: readonly AnyStateNode[] | undefined, index: number) =>
  `${node.id}|${eventType || "(always)"}|${target?.map((t) => t.id).join(",") ?? "(self)"}|${index}`;

/**
 * Every transition a machine defines, eventless ones included — but those marked
 * `meta: { replayOnly: true }`: they take only the events of older logs, which live traffic never sends.
 */
export function definedTransitions(machine: AnyStateMachine): string[] {
  const out: string[] = [];
  const visit = (node: AnyStateNode) => {
    for (const [event, defs] of node.transitions)
      (defs as TransitionDef[]).forEach((d, i) => {
        if (!d.meta?.replayOnly) out.push(keyOf(node, event, d.target, i));
      });
    ((node.always ?? []) as TransitionDef[]).forEach((d, i) => out.push(keyOf(node, "", d.target, i)));
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  return out;
}

function keyOfTaken(t: TransitionDef): string {
  const list = (t.eventType === "" ? t.source.always : t.source.transitions.get(t.eventType)) as
    TransitionDef[] | undefined;
  const i = list ? list.indexOf(t) : -1;
  return keyOf(t.source, t.eventType, t.target, i);
}

export interface CoverageRecorder {
  /** machine id → transition keys taken. */
  taken: Map<string, Set<string>>;
  reset(): void;
  uninstall(): void;
}

interface Inspectable {
  system?: {
    inspect?: (o: { next: (e: { type: string; _transitions?: TransitionDef[] }) => void }) => { unsubscribe(): void };
  };
}

type Methods = Record<string, (...a: unknown[]) => unknown>;

/**
 * `existing`: machines already constructed (module singletons). StateMachine binds its methods in
 * the constructor, so those get their own wrapped methods; the prototype is wrapped for machines
 * built later (the clinic's per-settings machines, the generated step machines).
 */
export function installCoverage(existing: AnyStateMachine[]): CoverageRecorder {
  const proto = Object.getPrototypeOf(existing[0]) as Methods;
  const taken = new Map<string, Set<string>>();
  const restore: Array<() => void> = [];
  const wrap = (original: (...a: unknown[]) => unknown, scopeArg: number) =>
    function (this: AnyStateMachine, ...args: unknown[]) {
      const scope = args[scopeArg] as Inspectable | undefined;
      const sub = scope?.system?.inspect?.({
        next: (e) => {
          if (e.type !== "@xstate.microstep" || !e._transitions) return;
          let set = taken.get(this.id);
          if (!set) taken.set(this.id, (set = new Set()));
          for (const t of e._transitions) set.add(keyOfTaken(t));
        },
      });
      try {
        return original.apply(this, args);
      } finally {
        sub?.unsubscribe();
      }
    };
  const patch = (target: Methods, self?: AnyStateMachine) => {
    for (const [name, scopeArg] of [
      ["transition", 2],
      ["getInitialSnapshot", 0],
    ] as const) {
      const original = target[name]!;
      const wrapped = wrap(original, scopeArg);
      target[name] = self ? wrapped.bind(self) : wrapped;
      restore.push(() => (target[name] = original));
    }
  };
  patch(proto);
  for (const m of existing)
    if (Object.prototype.hasOwnProperty.call(m, "transition")) patch(m as unknown as Methods, m);
  return {
    taken,
    reset: () => taken.clear(),
    uninstall: () =>
      restore
        .splice(0)
        .reverse()
        .forEach((f) => f()),
  };
}

export interface MachineCoverage {
  machine: string;
  defined: number;
  covered: number;
  missing: string[];
}

export function coverageOf(machines: AnyStateMachine[], taken: Map<string, Set<string>>): MachineCoverage[] {
  return machines.map((m) => {
    const defined = definedTransitions(m);
    const got = taken.get(m.id) ?? new Set<string>();
    const missing = defined.filter((k) => !got.has(k));
    return { machine: m.id, defined: defined.length, covered: defined.length - missing.length, missing };
  });
}
