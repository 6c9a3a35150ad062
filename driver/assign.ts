import { assign as xstateAssign } from "xstate";

/**
 * xstate's `assign`, minus one recomputation (issue 46). Stock `assign` makes its new snapshot with
 * xstate's `cloneMachineSnapshot`, which recomputes the state value and the tags from the active
 * state nodes — a walk over the whole configuration — although an assign changes only the
 * context: the nodes, and so the value and the tags, are those of the snapshot it starts from.
 * Here the new snapshot is that snapshot with the new context; everything else (value, tags,
 * history, children, methods) is the very same. In a clinic turn 8 of the ~14 snapshots xstate
 * makes are assigns', and the value walk was the largest single item of the statechart's CPU
 * (doc/bench.md, "Cut: statechart work per turn").
 *
 * It hooks xstate's builtin-action protocol (an action with `resolve(scope, snapshot, args,
 * params, action)` returning `[snapshot]`), which xstate keeps internal: the version is pinned in
 * package.json, and test/driver/assign.test.ts checks every snapshot field against stock
 * `assign` on a real machine. Machines here are pure: no `spawn` (the argument throws).
 */

type Assignment = (args: Record<string, unknown>, params: unknown) => unknown;
type Resolve = (
  scope: { self: unknown; system: unknown },
  snapshot: { context: object | undefined },
  args: { event: unknown },
  params: unknown,
  action: { assignment: Assignment | Record<string, unknown> },
) => [unknown, undefined, undefined];

const noSpawn = () => {
  throw new Error("assign: machines driven by the engine do not spawn actors");
};

const resolve: Resolve = (scope, snapshot, args, params, { assignment }) => {
  const context = snapshot.context;
  if (!context) throw new Error("Cannot assign to undefined `context`.");
  const input = { context, event: args.event, spawn: noSpawn, self: scope.self, system: scope.system };
  let update: unknown;
  if (typeof assignment === "function") update = assignment(input, params);
  else {
    const partial: Record<string, unknown> = {};
    for (const key of Object.keys(assignment)) {
      const p = assignment[key];
      partial[key] = typeof p === "function" ? (p as Assignment)(input, params) : p;
    }
    update = partial;
  }
  return [{ ...snapshot, context: Object.assign({}, context, update) }, undefined, undefined];
};

export const assign = ((assignment: Parameters<typeof xstateAssign>[0]) => {
  const action = xstateAssign(assignment) as unknown as { resolve: Resolve };
  action.resolve = resolve;
  return action;
}) as unknown as typeof xstateAssign;
