// The one vocabulary of why a run ended where it did (seed 002 §10) and how it ended (§14.3).
// Workbench and clinic runs record the same classes, so statistics compare systems.
import { z } from "zod";

export const REASON_CODES = [
  // Domain and interpretation
  "AMBIGUOUS_BUSINESS_TERM",
  "MISSING_PERIOD",
  "MISSING_AS_OF_DATE",
  "MULTIPLE_VALID_INTERPRETATIONS",
  "ENTITY_NOT_RESOLVED",
  "LOW_CONFIDENCE_ENTITY_BINDING",
  // Data and coverage
  "NO_MATCH_IN_1C",
  "PARTIAL_MATCH_IN_1C",
  "INSUFFICIENT_DOCUMENT_DEPTH",
  "CONFLICTING_EVIDENCE",
  "MISSING_SUPPORTING_DOCUMENT",
  "EVIDENCE_DEPTH_LIMIT",
  // Tools and execution
  "TOOL_EXECUTION_ERROR",
  "MCP_TIMEOUT",
  "MCP_SCHEMA_ERROR",
  "INVALID_TOOL_OUTPUT",
  "ROUTE_EXECUTION_ABORTED",
  // Dialogue and UX
  "QUESTION_UNDER_SPECIFIED",
  "NEEDS_USER_CONFIRMATION",
  "ASSUMPTION_APPLIED_EXPLICITLY",
  // Extension (not in the seed's minimal set): the deterministic path cannot read the question
  // and no model is configured — distinct from a tool failure, so statistics can tell them apart.
  "MODEL_REQUIRED",
  // Extensions for the empty-result policy (§12.3): each situation keeps its own code.
  "INVALID_DATE",
  "FUTURE_DATE",
  "RELATIVE_DATE_RESOLVED",
  "ENTITY_ROLE_MISMATCH",
  "ROUTE_DOES_NOT_COVER_ROLE",
  // A connected model answered, but not usably (twice): not the same as no model at all.
  "MODEL_OUTPUT_INVALID",
  // A string from tool data (a name, a number) did not look like one, or differed from the
  // directory's entry for its id: it is not shown (systems/evidence/tool-strings.ts).
  "UNTRUSTED_TOOL_STRING",
] as const;

export const ReasonCode = z.enum(REASON_CODES);
export type ReasonCode = z.infer<typeof ReasonCode>;

export const OUTCOME_CLASSES = [
  "FULLY_ANSWERED",
  "PARTIALLY_ANSWERED",
  "BLOCKED_BY_AMBIGUITY",
  "BLOCKED_BY_MISSING_DATA",
  "BLOCKED_BY_TOOLING",
  "MISROUTED",
  "FAILED_TO_BIND_ENTITIES",
] as const;

export const OutcomeClass = z.enum(OUTCOME_CLASSES);
export type OutcomeClass = z.infer<typeof OutcomeClass>;

/** Where a gap comes from (§9.3: "это проблема данных, маршрута или доменного определения"). */
export type ReasonArea = "domain" | "data" | "tooling" | "dialogue";

export const reasonInfo: Record<ReasonCode, { area: ReasonArea; ru: string }> = {
  AMBIGUOUS_BUSINESS_TERM: { area: "domain", ru: "бизнес-термин не имеет единственной трактовки" },
  MISSING_PERIOD: { area: "domain", ru: "не указан период" },
  MISSING_AS_OF_DATE: { area: "domain", ru: "не указана дата отсечения" },
  MULTIPLE_VALID_INTERPRETATIONS: { area: "domain", ru: "у вопроса несколько допустимых трактовок" },
  ENTITY_NOT_RESOLVED: { area: "domain", ru: "сущность из вопроса не найдена в учёте" },
  LOW_CONFIDENCE_ENTITY_BINDING: { area: "domain", ru: "сущность привязана неуверенно (несколько кандидатов)" },
  NO_MATCH_IN_1C: { area: "data", ru: "в учётных данных ничего не найдено по запросу" },
  PARTIAL_MATCH_IN_1C: { area: "data", ru: "данные найдены частично" },
  INSUFFICIENT_DOCUMENT_DEPTH: { area: "data", ru: "не хватает документального подтверждения" },
  CONFLICTING_EVIDENCE: { area: "data", ru: "источники противоречат друг другу" },
  MISSING_SUPPORTING_DOCUMENT: { area: "data", ru: "нет ожидаемого подтверждающего документа" },
  EVIDENCE_DEPTH_LIMIT: { area: "data", ru: "углублённая проверка выполнена не для всех случаев" },
  TOOL_EXECUTION_ERROR: { area: "tooling", ru: "инструмент завершился ошибкой" },
  MCP_TIMEOUT: { area: "tooling", ru: "инструмент не ответил вовремя" },
  MCP_SCHEMA_ERROR: { area: "tooling", ru: "вызов инструмента не соответствует его схеме" },
  INVALID_TOOL_OUTPUT: { area: "tooling", ru: "инструмент вернул данные не по своей схеме" },
  ROUTE_EXECUTION_ABORTED: { area: "tooling", ru: "выполнение маршрута прервано" },
  QUESTION_UNDER_SPECIFIED: { area: "dialogue", ru: "вопрос сформулирован недостаточно конкретно" },
  NEEDS_USER_CONFIRMATION: { area: "dialogue", ru: "нужно подтверждение пользователя" },
  ASSUMPTION_APPLIED_EXPLICITLY: { area: "dialogue", ru: "применено явно помеченное допущение" },
  MODEL_REQUIRED: { area: "tooling", ru: "для разбора вопроса нужна языковая модель, а она не подключена" },
  INVALID_DATE: { area: "dialogue", ru: "названной даты не существует в календаре" },
  FUTURE_DATE: { area: "dialogue", ru: "дата позже рабочей даты базы — учёт на неё ещё не ведётся" },
  RELATIVE_DATE_RESOLVED: { area: "dialogue", ru: "относительная дата отсчитана от рабочей даты базы" },
  ENTITY_ROLE_MISMATCH: { area: "domain", ru: "контрагент есть в учёте, но не в той роли, о которой спрошено" },
  ROUTE_DOES_NOT_COVER_ROLE: { area: "domain", ru: "доступный регистр не ведёт расчёты с контрагентом в этой роли" },
  MODEL_OUTPUT_INVALID: { area: "tooling", ru: "языковая модель подключена, но дважды ответила не по схеме" },
  UNTRUSTED_TOOL_STRING: {
    area: "data",
    ru: "строка из данных учёта не похожа на название или номер и не показана",
  },
};

/** Stable order for storage and display: the order of the seed's list. */
export function sortReasons(codes: Iterable<ReasonCode>): ReasonCode[] {
  const set = new Set(codes);
  return REASON_CODES.filter((c) => set.has(c));
}

/**
 * The §14.3 class of a run from any system, for statistics. Evidence runs store the class
 * itself; other systems' own outcome names are mapped where the meaning is unambiguous, and
 * left "UNCLASSIFIED" otherwise rather than guessed.
 */
export function outcomeClassOf(
  outcome: string | null,
  reasonCodes: readonly string[] = [],
): OutcomeClass | "ESCALATED" | "UNCLASSIFIED" {
  if (outcome && (OUTCOME_CLASSES as readonly string[]).includes(outcome)) return outcome as OutcomeClass;
  const has = (...codes: string[]) => codes.some((c) => reasonCodes.includes(c));
  switch (outcome) {
    case "answered":
      // Workbench: an answer whose validation flagged issues is only partly trustworthy.
      return has("validation_failed") ? "PARTIALLY_ANSWERED" : "FULLY_ANSWERED";
    case "escalated": // clinic: handed to a human — not an answer, whatever the reason (issue 17)
      return "ESCALATED";
    case "clarification":
    case "plain_answer":
      // Workbench adequacy reasons say why no model answer was given.
      if (has("unsupported_task", "unsupported_type")) return "MISROUTED";
      if (has("target_not_found")) return "FAILED_TO_BIND_ENTITIES";
      if (has("documentation_not_found")) return "BLOCKED_BY_MISSING_DATA";
      return outcome === "clarification" ? "BLOCKED_BY_AMBIGUITY" : "UNCLASSIFIED";
    case "model_unavailable":
    case "failed": // the run failed (model unavailable, internal error): nothing reached the user
      return "BLOCKED_BY_TOOLING";
    default:
      return "UNCLASSIFIED";
  }
}
