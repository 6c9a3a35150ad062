import {
  createActor,
  type ActorScope,
  type AnyActorLogic,
  type EventFromLogic,
  type InputFrom,
  type SnapshotFrom,
} from "xstate";

/**
 * `transition` / `initialTransition` as in xstate, with the inert actor scope made once per
 * machine instead of per call. xstate builds that scope from a new actor, and an actor
 * computes its machine's initial state on construction: per call, that was most of what a
 * transition cost (measured in bench/turn.ts: a clinic turn makes several). The actor is
 * never started, so it does nothing; machines here are pure (no invoke, no spawn), so no child
 * ever registers in its system. The scope only gathers the actions a transition would run.
 */
type Action = { type: string; params?: unknown };

interface Scope {
  scope: ActorScope<never, never>;
  collect: Action[] | null;
}

const scopes = new WeakMap<AnyActorLogic, Scope>();

function scopeOf(machine: AnyActorLogic): Scope {
  let s = scopes.get(machine);
  if (s) return s;
  const self = createActor(machine);
  const holder: Scope = { scope: null as never, collect: null };
  holder.scope = {
    self,
    defer: () => {},
    id: "",
    logger: () => {},
    sessionId: "",
    stopChild: () => {},
    system: self.system,
    emit: () => {},
    actionExecutor: (a: Action) => {
      holder.collect?.push(a);
    },
  } as unknown as ActorScope<never, never>;
  scopes.set(machine, (s = holder));
  return s;
}

function collecting<T>(machine: AnyActorLogic, run: (scope: ActorScope<never, never>) => T): [T, Action[]] {
  const s = scopeOf(machine);
  // Transitions are synchronous; a guard may run another machine's transition meanwhile,
  // and even the same machine's would get its own list back here.
  const outer = s.collect;
  const mine: Action[] = [];
  s.collect = mine;
  try {
    return [run(s.scope), mine];
  } finally {
    s.collect = outer;
  }
}

export function pureTransition<M extends AnyActorLogic>(
  machine: M,
  snapshot: SnapshotFrom<M>,
  event: EventFromLogic<M>,
): [SnapshotFrom<M>, Action[]] {
  return collecting(
    machine,
    (scope) => machine.transition(snapshot as never, event as never, scope as never) as SnapshotFrom<M>,
  );
}

export function pureInitialTransition<M extends AnyActorLogic>(
  machine: M,
  input?: InputFrom<M>,
): [SnapshotFrom<M>, Action[]] {
  return collecting(machine, (scope) => machine.getInitialSnapshot(scope as never, input) as SnapshotFrom<M>);
}
