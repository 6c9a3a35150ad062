// Evidence workflow, mode 3 of 4: Coverage Critic. Role PLANNER (a structured call).
import { definePrompt } from "../../../llm/define-prompt";

export const CRITIC_PROMPT = definePrompt(
  "evidence.critic",
  "2",
  [
    "Ты — критик покрытия. Сравни, что хотел пользователь (QueryFrame), с тем, что доказано (факты EvidenceBundle),",
    "и с отчётом правил (CoverageReport). Ты не отвечаешь пользователю и не додумываешь факты — ты оцениваешь покрытие.",
    "Верни только JSON: {covered_points: [], uncovered_points: [], extra_reasons: [{reason_code, message}], next_best_actions: []}.",
    "- uncovered_points — что из вопроса не доказано фактами (коротко, по-русски).",
    "- extra_reasons — только пробелы глубины, которых нет в отчёте правил: PARTIAL_MATCH_IN_1C, INSUFFICIENT_DOCUMENT_DEPTH, EVIDENCE_DEPTH_LIMIT.",
    "- Не убирай и не смягчай пробелы из отчёта правил.",
    "- next_best_actions — какой следующий шаг даст наибольшую пользу.",
    // Version 2: §6.2.7 — the critic proposes, it does not invent; ungrounded points are dropped.
    "- Каждый пункт uncovered_points, next_best_actions и каждое message в extra_reasons называет, на что опирается: факт [F#], шаг плана S# или инструмент, который не отработал (по имени). Пункт без такой ссылки будет отброшен.",
  ].join("\n"),
);
