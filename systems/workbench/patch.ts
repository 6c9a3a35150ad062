// The scoped patch of seed 000: an answer changes only the targeted part of the plan, bumps the
// plan version and invalidates the tasks that depend on it. The root request never changes.
import { z } from "zod";
import { dependentsOf } from "./plan-validate";
import type { Candidate, Plan, Task } from "./types";

export const PlanUpdateSchema = z.discriminatedUnion("field", [
  z.object({ taskId: z.string(), field: z.literal("resolvedEntity"), candidateId: z.string() }),
  z.object({ taskId: z.string(), field: z.literal("mention"), value: z.string().min(1).max(200) }),
  z.object({ taskId: z.string(), field: z.literal("entityType"), value: z.string().min(1).max(64) }),
]);
export type PlanUpdate = z.infer<typeof PlanUpdateSchema>;

export const ScopedPatchSchema = z.object({
  interactionId: z.string(),
  basePlanVersion: z.number().int(),
  clarificationId: z.string(),
  updates: z.array(PlanUpdateSchema).min(1).max(4),
});
export type ScopedPatch = z.infer<typeof ScopedPatchSchema>;

export type PatchResult =
  | { ok: true; plan: Plan; invalidated: string[] }
  | { ok: false; code: "conflict" | "unknown_candidate" | "unknown_task"; message: string };

/**
 * Applies a patch to a plan. `candidates` is the clarification's persisted candidate snapshot:
 * a resolvedEntity update may only name a candidate from it.
 */
export function applyPatch(plan: Plan, patch: ScopedPatch, candidates: readonly Candidate[]): PatchResult {
  if (patch.basePlanVersion !== plan.planVersion) {
    return {
      ok: false,
      code: "conflict",
      message: `plan version ${plan.planVersion}, patch based on ${patch.basePlanVersion}`,
    };
  }
  const tasks: Task[] = plan.tasks.map((t) => ({ ...t, mentions: [...t.mentions], dependsOn: [...t.dependsOn] }));
  const nextVersion = plan.planVersion + 1;
  const invalidated = new Set<string>();
  for (const u of patch.updates) {
    const task = tasks.find((t) => t.id === u.taskId);
    if (!task) return { ok: false, code: "unknown_task", message: `no task ${u.taskId}` };
    if (u.field === "resolvedEntity") {
      const c = candidates.find((x) => x.candidateId === u.candidateId);
      if (!c)
        return {
          ok: false,
          code: "unknown_candidate",
          message: `candidate ${u.candidateId} is not in the clarification's list`,
        };
      task.selection = {
        identity: c.identity,
        candidateId: c.candidateId,
        clarificationId: patch.clarificationId,
        planVersion: nextVersion,
        source: "user",
      };
    } else if (u.field === "mention") {
      task.mentions = [u.value];
      delete task.selection;
      delete task.refersTo;
      task.dependsOn = task.dependsOn.filter((d) => d === task.folderScope);
    } else {
      task.entityType = u.value;
      delete task.selection;
    }
    for (const d of dependentsOf(tasks, task.id)) invalidated.add(d);
  }
  // Dependent tasks are recomputed from the new target: drop what they had pinned from the old one.
  for (const id of invalidated) {
    const t = tasks.find((x) => x.id === id)!;
    if (t.selection && t.selection.clarificationId !== patch.clarificationId) delete t.selection;
  }
  return { ok: true, plan: { ...plan, planVersion: nextVersion, tasks }, invalidated: [...invalidated] };
}

/**
 * On a changed workspace, choices the model made are re-resolved; the user's own are re-checked.
 * A model's choice whose document is gone is kept too: the resolver then reports the lost
 * selection and a new question is asked (seed 000) — never a silent replacement by a fresh pick.
 */
export function dropModelSelections(plan: Plan, exists: (identity: string) => boolean = () => true): Plan {
  return {
    ...plan,
    tasks: plan.tasks.map((t) =>
      t.selection?.source === "reranker" && exists(t.selection.identity)
        ? (({ selection: _s, ...rest }) => rest)(t)
        : t,
    ),
  };
}
