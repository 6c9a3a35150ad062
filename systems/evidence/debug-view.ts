// The readable debug view of §14.2: how the question was understood, which entities were and
// were not recognized, the route, the tools, what was found, and why the answer is what it is.
import type {
  ConversationState,
  CoverageReport,
  EvidenceBundle,
  ExecutionPlan,
  QueryFrame,
  ToolRun,
} from "./artifacts";
import type { TurnScope } from "./frame-resolve";

export interface DebugViewInput {
  frame: QueryFrame | null;
  scope: TurnScope | null;
  plan: ExecutionPlan | null;
  toolRuns: ToolRun[];
  bundle: EvidenceBundle;
  coverage: CoverageReport;
  state: ConversationState;
}

export function debugView(i: DebugViewInput): Record<string, string | string[]> {
  const bound = i.bundle.entity_bindings
    .filter((b) => b.status === "bound")
    .map((b) => `${b.surface} → ${b.resolved_to} (${b.entity_id}, ${b.confidence})`);
  const unbound = i.bundle.entity_bindings
    .filter((b) => b.status !== "bound")
    .map(
      (b) =>
        `${b.surface}: ${b.status}${b.candidates.length ? ` [${b.candidates.map((c) => c.name).join(", ")}]` : ""}`,
    );
  return {
    "как понят вопрос": i.frame
      ? `${i.frame.original_user_question} → ${i.frame.normalized_question} (intent ${i.frame.business_intent}, ${i.frame.interpreted_by})`
      : "не разобран",
    предпосылки: i.scope?.premises.map((p) => `${p.label}: ${p.value} [${p.status}]`) ?? [],
    "распознанные сущности": [...(i.frame?.entity_candidates.map((e) => `${e.surface} (${e.type})`) ?? []), ...bound],
    "нераспознанные сущности": unbound.length ? unbound : ["—"],
    маршрут: i.plan
      ? `${i.plan.goal} [${i.plan.planned_by}]: ${i.plan.steps.map((s) => `${s.step_id} ${s.tool ?? s.type}${s.required ? "" : "?"}`).join(" → ")}`
      : `без плана (gate: ${i.scope?.gate ?? "—"})`,
    "вызванные инструменты": i.toolRuns.map(
      (r) =>
        `${r.step_id} ${r.tool_name} ${JSON.stringify(r.input)} → ${r.status}${r.error_code ? ` ${r.error_code}` : ""} (${r.rows_returned} строк, ${r.duration_ms} мс)`,
    ),
    "что найдено": i.bundle.facts.map((f) => `${f.fact_id} ${f.type} ${f.entity}: ${f.value ?? ""}`),
    "почему ответ такой": `${i.coverage.outcome} (${i.coverage.answerability}); ${i.coverage.reason_codes.join(", ") || "без ограничений"}`,
  };
}
