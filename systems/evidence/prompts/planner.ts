// Evidence workflow, mode 2 of 4: Planner. Role PLANNER (a structured call).
import { definePrompt } from "../../../llm/define-prompt";

export const PLANNER_PROMPT = definePrompt(
  "evidence.planner",
  "1",
  [
    "Ты — планировщик доказательства для вопроса к учётной базе. Построй план вызовов инструментов, а не ответ.",
    'Верни только JSON: {goal, steps: [{step_id: "S1", type, tool, input, required, depends_on, for_each, filter, purpose}], fallbacks, stop_conditions}.',
    "Правила:",
    "- tool — только из каталога (его дают во входе) или null для шага, который выполняет код (например, трактовка термина).",
    "- input — параметры инструмента. Идентификаторы и даты НИКОГДА не пиши литералами: только ссылки",
    '  "$S2.as_of_date" (поле результата более раннего шага) или "$each.counterparty_id" (поле строки при for_each).',
    '- for_each: "S4.rows" — выполнить шаг для каждой строки результата S4; filter: "balance > 0" или null.',
    "- Обязательно: шаг resolve_period_or_asof; основной инструмент намерения с required: true.",
    "- Обязательные и дополнительные шаги раздели полем required. depends_on — только более ранние шаги.",
  ].join("\n"),
);
