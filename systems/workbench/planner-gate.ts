// Planner gate (seed 001 §3) and validation of the planner's output. The planner is asked only for
// several linked tasks, an implicit intent, a history reference or a low parser confidence. Its
// plan is checked against the registry and the request text; it can never declare an identity.
import { MentionGrounding } from "./planner-grounding";
import { PLANNER_CONFIDENCE, splitTargets, type ParsedPlan } from "./plan";
import { PlannerOutputSchema, validatePlan, type PlanIssue } from "./plan-validate";
import type { Normalized } from "./normalize";
import type { Plan, Task } from "./types";
import { listsType } from "./intents";

export interface GateDecision {
  call: boolean;
  reasons: Array<"linked_tasks" | "implicit_intent" | "history_reference" | "low_confidence">;
}

export function plannerGate(parsed: ParsedPlan): GateDecision {
  const reasons: GateDecision["reasons"] = [];
  // Several clauses open the gate only when one depends on another («…, затем покажи её»);
  // independent clauses are each planned deterministically.
  if (parsed.linkedTasks) reasons.push("linked_tasks");
  if (parsed.implicitIntent) reasons.push("implicit_intent");
  if (parsed.historyReference) reasons.push("history_reference");
  if (parsed.confidence < PLANNER_CONFIDENCE) reasons.push("low_confidence");
  return { call: reasons.length > 0, reasons };
}

export interface PlannerContext {
  norm: Normalized;
  planVersion: number;
  knownTypes: ReadonlySet<string>;
  /** Workspace identities: a mention equal to one the user never typed is a declared identity. */
  isIdentity: (s: string) => boolean;
}

export type PlannerAcceptance = { ok: true; plan: Plan; searchQueries: string[] } | { ok: false; issues: PlanIssue[] };

export function acceptPlannerOutput(raw: unknown, ctx: PlannerContext): PlannerAcceptance {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return { ok: false, issues: [{ code: "invalid_json" }] };
    }
  }
  const parsed = PlannerOutputSchema.safeParse(value);
  if (!parsed.success)
    return { ok: false, issues: [{ code: "schema", detail: parsed.error.issues[0]?.message ?? "" }] };
  const tasks: Task[] = parsed.data.tasks.map((t) => {
    const task: Task = {
      id: t.id,
      intent: t.intent as Task["intent"],
      sourceMode: t.sourceMode as Task["sourceMode"],
      mentions: t.mentions.map((m) => m.trim()).filter(Boolean),
      dependsOn: [...new Set(t.dependsOn)],
    };
    if (t.entityType) task.entityType = t.entityType;
    if (t.folderScope) task.folderScope = t.folderScope;
    return task;
  });
  const issues: PlanIssue[] = [];
  const grounding = new MentionGrounding(ctx.norm);
  for (const t of tasks) {
    for (const m of t.mentions) {
      if (ctx.isIdentity(m) && !grounding.typedIdentity(m))
        issues.push({ code: "declared_identity", taskId: t.id, detail: m });
      else if (!grounding.grounded(m)) issues.push({ code: "ungrounded_mention", taskId: t.id, detail: m });
    }
    // The same target as the task it depends on ("найди X, затем покажи её") is a back-reference.
    const dep = t.dependsOn.length === 1 ? tasks.find((x) => x.id === t.dependsOn[0]) : undefined;
    if (
      dep &&
      !listsType(t.intent) &&
      !t.folderScope &&
      (t.mentions.length === 0 || grounding.isPronoun(t.mentions[0]!) || sameMentions(t, dep))
    ) {
      t.refersTo = dep.id;
      if (t.mentions.length === 0 || grounding.isPronoun(t.mentions[0]!)) t.mentions = [...dep.mentions];
      if (t.sourceMode === "conversation") t.sourceMode = dep.sourceMode;
      t.entityType ??= dep.entityType;
    }
  }
  const plan: Plan = { planVersion: ctx.planVersion, plannedBy: "llm", tasks: oneTargetPerTask(tasks) };
  issues.push(...validatePlan(plan, ctx.knownTypes));
  if (issues.length) return { ok: false, issues };
  return { ok: true, plan, searchQueries: parsed.data.searchQueries ?? [] };
}

/**
 * As the deterministic plan does (`splitTargets`): one task per target. The first keeps the
 * planner's id; whatever depended on the task depends on all of its parts.
 */
function oneTargetPerTask(tasks: Task[]): Task[] {
  const ids = new Set(tasks.map((t) => t.id));
  const parts = new Map<string, string[]>();
  const out: Task[] = [];
  for (const t of tasks) {
    out.push(t);
    const others = splitTargets(t).map((part, i) => {
      let id = `${t.id}-${i + 2}`;
      while (ids.has(id)) id += "x";
      ids.add(id);
      return { ...part, id };
    });
    if (others.length === 0) continue;
    out.push(...others);
    parts.set(
      t.id,
      others.map((o) => o.id),
    );
  }
  if (parts.size) for (const t of out) t.dependsOn = t.dependsOn.flatMap((d) => [d, ...(parts.get(d) ?? [])]);
  return out;
}

function sameMentions(a: Task, b: Task): boolean {
  return a.mentions.length > 0 && a.mentions.join("\u0000").toLowerCase() === b.mentions.join("\u0000").toLowerCase();
}
