// Evidence workflow, mode 3 of 4: Coverage Critic. Role PLANNER (a structured call).
import { definePrompt } from "../../../llm/define-prompt";

export const CRITIC_PROMPT = definePrompt(
  "evidence.critic",
  "3",
  [
    "Ты — критик покрытия. Сравни, что хотел пользователь (QueryFrame), с тем, что доказано (факты EvidenceBundle),",
    "и с отчётом правил (CoverageReport). Ты не отвечаешь пользователю и не пишешь текст для него: ты выбираешь",
    "пробелы глубины и следующие шаги из закрытого списка, а предложения для пользователя пишет система.",
    'Верни только JSON: {"gaps": [{"kind", "ref"}], "actions": [{"kind", "ref"}]}.',
    "- gaps[].kind — одно из: documents_not_checked (документы, образующие остаток, не проверены), document_to_request",
    "  (подтверждающие документы нужно запросить у контрагента), payments_not_reconciled (остаток не сверен с оплатами),",
    "  step_incomplete (шаг плана выполнен не полностью), partial_match (данные по контрагенту найдены не полностью).",
    "- actions[].kind — одно из: request_documents, check_posting, retry_step, run_deep_check, confirm_period,",
    "  confirm_counterparty.",
    '- ref — ровно одно из: {"fact_id": "F2"} (id факта из evidence.facts), {"step_id": "S5"} (шаг плана),',
    '  {"tool": "get_payment_chain"} (инструмент, который не отработал, из evidence.errors), {"scope": "party"} (контрагент',
    '  этого запроса) или {"scope": "period"} (дата отсечения этого запроса). Пункт без такой ссылки будет отброшен.',
    "- Не пиши суммы, статусы, даты и пояснения: их берут из фактов. Не убирай и не смягчай пробелы из отчёта правил.",
    "- Если добавить нечего, верни пустые списки.",
  ].join("\n"),
);
