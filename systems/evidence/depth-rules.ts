// Depth (seed 002 §7.5, §8.6): a model plan that proves less than the built-in plan for the same
// intent must not look complete. Compared against the built-in plan (the floor): checks the model
// left out (added by the engine), a core read narrowed by a filter the floor does not set, and
// per-row checks run for fewer cases than the floor's step would have run.
import type { ExecutionPlan } from "./artifacts";
import type { CriticInput } from "./critic-rules";
import { field, passes } from "./executor";
import { planFor } from "./plan-rules";

const OKS = new Set(["success", "empty"]);

/**
 * Per-row steps of a model plan that covered fewer rows than the built-in plan's step for the same
 * tool would have: its filter or source narrowed the check the intent needs.
 */
export function shallowerThanFloor(i: CriticInput): string[] {
  if (!i.plan || i.plan.planned_by !== "llm" || i.scope.gate !== "proceed") return [];
  const floor = planFor(i.scope, i.requestId);
  const rowsOf = (tool: string | null) =>
    i.toolRuns
      .filter((r) => r.tool_name === tool && OKS.has(r.status))
      .flatMap((r) => (field(r.output, "rows") as unknown[] | undefined) ?? []);
  const out: string[] = [];
  // Checks the model's plan left out, added by the engine (extendToFloor): the model's route was
  // shallower than the intent needs, whatever the added steps then found.
  const added = i.plan.extended_by_engine ?? [];
  if (added.length)
    out.push(
      `План, составленный моделью, не включал ${added.length === 1 ? "проверку" : "проверки"} ${added.map((a) => `«${planPurpose(i.plan!, a)}»`).join(", ")} — ${added.length === 1 ? "она добавлена" : "они добавлены"} по встроенному плану`,
    );
  // A core read narrowed by the model (a filter the built-in plan does not set, e.g. only overdue
  // rows for a question about any open balance): every check built on it covers fewer cases.
  for (const f of floor.steps) {
    if (!f.tool || f.for_each) continue;
    for (const m of i.plan.steps.filter((x) => x.tool === f.tool && !x.for_each)) {
      const narrowed = Object.entries(m.input).filter(
        ([k, v]) => !(k in f.input) && v !== false && v !== null && v !== undefined && v !== "",
      );
      if (narrowed.length)
        out.push(
          `Шаг «${f.purpose}» выполнен с ограничением, которого нет во встроенном плане (${narrowed.map(([k]) => k).join(", ")}) — проверено меньше случаев`,
        );
    }
  }
  for (const f of floor.steps) {
    if (!f.tool || !f.for_each) continue;
    const source = floor.steps.find((x) => x.step_id === f.for_each!.split(".")[0]);
    // Rows are counted as the executor calls them: once per distinct `$each.` input.
    const eachKeys = Object.entries(f.input).flatMap(([k, v]) =>
      typeof v === "string" && v.startsWith("$each.") ? [[k, v.slice(6)] as const] : [],
    );
    const key = (o: unknown, from: "row" | "input") =>
      JSON.stringify(eachKeys.map(([k, col]) => field(o, from === "row" ? col : k)));
    const need = new Set(
      rowsOf(source?.tool ?? null)
        .filter((row) => passes(row, f.filter))
        .map((row) => key(row, "row")),
    );
    const done = new Set(
      i.toolRuns.filter((r) => r.tool_name === f.tool && r.status !== "skipped").map((r) => key(r.input, "input")),
    );
    const missed = [...need].filter((k) => !done.has(k)).length;
    const cut = i.bundle.truncated.some((t) => i.plan!.steps.find((x) => x.step_id === t.step_id)?.tool === f.tool);
    if (missed && !cut)
      out.push(
        `Проверка «${f.purpose}» не выполнена для ${missed} из ${need.size} случаев, которые требует встроенный план`,
      );
  }
  return out;
}

/** The purpose of an added step, from its `S7: purpose (tool)` record. */
function planPurpose(plan: ExecutionPlan, added: string): string {
  const id = added.split(":")[0]!;
  return plan.steps.find((s) => s.step_id === id)?.purpose ?? added;
}
