// Plan validation against the registry: known intents, source modes and types, consistent
// intent/source pairs, references to existing tasks and a directed acyclic graph.
import { z } from "zod";
import { DOCUMENT_TYPES, INTENTS, SOURCE_MODES, type Plan, type Task } from "./types";
import { allowedSources, namesTargets } from "./intents";

export interface PlanIssue {
  code: string;
  taskId?: string;
  detail?: string;
}

export const MAX_TASKS = 8;

/**
 * `knownTypes`: types present in the workspace snapshot. A known-but-unsupported type (Process) is
 * a valid plan element — the resolver reports `unsupported_type`; a type nobody knows is not.
 */
export function validatePlan(plan: Plan, knownTypes: ReadonlySet<string> = new Set()): PlanIssue[] {
  const issues: PlanIssue[] = [];
  const ids = new Set<string>();
  if (plan.tasks.length === 0) issues.push({ code: "empty_plan" });
  if (plan.tasks.length > MAX_TASKS) issues.push({ code: "too_many_tasks", detail: String(plan.tasks.length) });
  for (const t of plan.tasks) {
    if (ids.has(t.id)) issues.push({ code: "duplicate_task_id", taskId: t.id });
    ids.add(t.id);
    if (!(INTENTS as readonly string[]).includes(t.intent))
      issues.push({ code: "unknown_intent", taskId: t.id, detail: t.intent });
    if (!(SOURCE_MODES as readonly string[]).includes(t.sourceMode))
      issues.push({ code: "unknown_source_mode", taskId: t.id });
    else if (!allowedSources(t.intent).includes(t.sourceMode))
      issues.push({ code: "source_mode_mismatch", taskId: t.id, detail: `${t.intent}/${t.sourceMode}` });
    if (t.entityType && !(DOCUMENT_TYPES as readonly string[]).includes(t.entityType) && !knownTypes.has(t.entityType))
      issues.push({ code: "unknown_type", taskId: t.id, detail: t.entityType });
    if (namesTargets(t.intent) && t.mentions.length === 0) issues.push({ code: "missing_mention", taskId: t.id });
  }
  for (const t of plan.tasks) {
    for (const d of t.dependsOn) {
      if (!ids.has(d)) issues.push({ code: "unknown_dependency", taskId: t.id, detail: d });
      if (d === t.id) issues.push({ code: "self_dependency", taskId: t.id });
    }
    if (t.folderScope) {
      const f = plan.tasks.find((x) => x.id === t.folderScope);
      if (!f || f.entityType !== "Folder") issues.push({ code: "folder_scope_not_folder", taskId: t.id });
      if (!t.dependsOn.includes(t.folderScope)) issues.push({ code: "folder_scope_not_dependency", taskId: t.id });
    }
    if (t.refersTo && !t.dependsOn.includes(t.refersTo))
      issues.push({ code: "reference_not_dependency", taskId: t.id });
  }
  if (issues.length === 0 && topoOrder(plan.tasks) === null) issues.push({ code: "cycle" });
  return issues;
}

/** Kahn's algorithm; null when the graph has a cycle. Ties keep plan order (stable, deterministic). */
export function topoOrder(tasks: readonly Task[]): Task[] | null {
  const indeg = new Map(tasks.map((t) => [t.id, 0]));
  for (const t of tasks) for (const d of t.dependsOn) if (indeg.has(d)) indeg.set(t.id, indeg.get(t.id)! + 1);
  const out: Task[] = [];
  const done = new Set<string>();
  while (out.length < tasks.length) {
    const next = tasks.find((t) => !done.has(t.id) && t.dependsOn.every((d) => done.has(d) || !indeg.has(d)));
    if (!next) return null;
    done.add(next.id);
    out.push(next);
  }
  return out;
}

/** Every task that (transitively) depends on `taskId` — invalidated when its target changes. */
export function dependentsOf(tasks: readonly Task[], taskId: string): string[] {
  const out = new Set<string>();
  const visit = (id: string) => {
    for (const t of tasks)
      if (t.dependsOn.includes(id) && !out.has(t.id)) {
        out.add(t.id);
        visit(t.id);
      }
  };
  visit(taskId);
  return [...out];
}

/** The planner's JSON (CONTRACT §3.5). Strict: an extra key such as "identity" makes it invalid. */
export const PlannerOutputSchema = z
  .object({
    tasks: z
      .array(
        z
          .object({
            id: z.string().regex(/^task-\d{1,3}$/),
            intent: z.string(),
            sourceMode: z.string(),
            entityType: z.string().nullish(),
            mentions: z.array(z.string().max(200)).max(5),
            dependsOn: z.array(z.string()).max(MAX_TASKS),
            folderScope: z.string().nullish(),
          })
          .strict(),
      )
      .min(1)
      .max(MAX_TASKS),
    searchQueries: z.array(z.string().max(120)).max(3).optional(),
  })
  .strict();
export type PlannerOutput = z.infer<typeof PlannerOutputSchema>;
