// Typed contracts of the domain tools (seed 002 §12): purpose, input, output, typical errors,
// limits and the empty-result policy. The demo MCP server registers exactly these schemas and
// the executor validates against them on its side too, so a drifting server is caught (§12.3).
import { z } from "zod";

export const TOOL_NAMES = [
  "resolve_counterparty",
  "resolve_period_or_asof",
  "get_open_supplier_settlements",
  "get_unclosed_documents_for_counterparty",
  "get_document_movements",
  "get_payment_chain",
  "get_balance_as_of",
  "get_related_closing_documents",
] as const;
export const ToolName = z.enum(TOOL_NAMES);
export type ToolName = z.infer<typeof ToolName>;

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "дата в формате YYYY-MM-DD");
const id = z.string().min(1).max(64);

/**
 * ok — rows found; empty — the query ran over existing data and the answer is "none" (a finding);
 * no_match — nothing in the data for this scope (not a finding); unbound_entity — an id that
 * does not exist; ambiguous — several candidates fit equally.
 */
export const ToolStatus = z.enum(["ok", "empty", "no_match", "unbound_entity", "ambiguous"]);
export type ToolStatus = z.infer<typeof ToolStatus>;

const base = { status: ToolStatus, note: z.string() };

export const toolInputs = {
  resolve_counterparty: z.object({
    query: z.string().min(1).max(200),
    role: z.enum(["supplier", "customer"]).optional(),
  }),
  resolve_period_or_asof: z.object({ text: z.string().max(200).optional() }),
  get_open_supplier_settlements: z.object({
    as_of_date: isoDate,
    counterparty_id: id.optional(),
    overdue_only: z.boolean().optional(),
  }),
  get_unclosed_documents_for_counterparty: z.object({ counterparty_id: id, as_of_date: isoDate }),
  get_document_movements: z.object({ document_id: id }),
  get_payment_chain: z.object({ counterparty_id: id, as_of_date: isoDate.optional() }),
  get_balance_as_of: z.object({ counterparty_id: id, as_of_date: isoDate }),
  get_related_closing_documents: z.object({ document_id: id }),
} satisfies Record<ToolName, z.ZodObject>;

export const toolOutputs = {
  resolve_counterparty: z.object({
    ...base,
    counterparty_id: z.string().nullable(),
    candidates: z.array(
      z.object({
        counterparty_id: z.string(),
        name: z.string(),
        inn: z.string(),
        roles: z.array(z.string()),
        score: z.number(),
      }),
    ),
    /** Names that fit the query too but were left out by the role asked for: the engine decides whether that narrowing may stand. */
    outside_role: z
      .array(z.object({ counterparty_id: z.string(), name: z.string(), roles: z.array(z.string()), score: z.number() }))
      .optional(),
  }),
  resolve_period_or_asof: z.object({
    ...base,
    as_of_date: isoDate.nullable(),
    period_from: isoDate.nullable(),
    period_to: isoDate.nullable(),
    source: z.enum(["explicit", "working_date"]),
    working_date: isoDate,
    data_available_from: isoDate,
    /** Extension (§12.3): why the words gave no usable date — a date that does not exist, or one after the working date. */
    problem: z.enum(["impossible_date", "future_date"]).nullable().optional(),
    /** Extension: the date was counted from the working date («вчера»). */
    relative: z.boolean().optional(),
  }),
  get_open_supplier_settlements: z.object({
    ...base,
    as_of_date: isoDate,
    movements_scanned: z.number().int(),
    rows: z.array(
      z.object({
        counterparty_id: z.string(),
        counterparty_name: z.string(),
        contract_id: z.string(),
        contract_number: z.string(),
        balance: z.number(),
        currency: z.string(),
        overdue_amount: z.number(),
        oldest_due_date: isoDate.nullable(),
        last_movement_date: isoDate,
        source_ref: z.string(),
      }),
    ),
  }),
  get_unclosed_documents_for_counterparty: z.object({
    ...base,
    counterparty_id: z.string(),
    as_of_date: isoDate,
    documents_scanned: z.number().int(),
    rows: z.array(
      z.object({
        document_id: z.string(),
        kind: z.string(),
        number: z.string(),
        date: isoDate,
        amount: z.number(),
        paid: z.number(),
        unpaid: z.number(),
        posted: z.boolean(),
        source_ref: z.string(),
      }),
    ),
  }),
  get_document_movements: z.object({
    ...base,
    document_id: z.string(),
    posted: z.boolean().nullable(),
    rows: z.array(
      z.object({
        register: z.string(),
        period: isoDate,
        counterparty_id: z.string(),
        contract_id: z.string(),
        amount: z.number(),
        source_ref: z.string(),
      }),
    ),
  }),
  get_payment_chain: z.object({
    ...base,
    counterparty_id: z.string(),
    rows: z.array(
      z.object({
        payment_id: z.string(),
        number: z.string(),
        date: isoDate,
        amount: z.number(),
        posted: z.boolean(),
        allocations: z.array(z.object({ document_id: z.string(), document_number: z.string(), amount: z.number() })),
        source_ref: z.string(),
      }),
    ),
  }),
  get_balance_as_of: z.object({
    ...base,
    counterparty_id: z.string(),
    counterparty_name: z.string().nullable(),
    as_of_date: isoDate,
    balance: z.number().nullable(),
    movements_count: z.number().int(),
    by_contract: z.array(z.object({ contract_id: z.string(), contract_number: z.string(), balance: z.number() })),
    source_ref: z.string().nullable(),
  }),
  get_related_closing_documents: z.object({
    ...base,
    document_id: z.string(),
    expected_kinds: z.array(z.string()),
    missing_kinds: z.array(z.string()),
    rows: z.array(
      z.object({
        document_id: z.string(),
        kind: z.string(),
        number: z.string(),
        date: isoDate,
        amount: z.number(),
        source_ref: z.string(),
      }),
    ),
  }),
} satisfies Record<ToolName, z.ZodObject>;

export type ToolInput<N extends ToolName> = z.infer<(typeof toolInputs)[N]>;
export type ToolOutput<N extends ToolName> = z.infer<(typeof toolOutputs)[N]>;

export interface ToolSpec {
  purpose: string;
  errors: string;
  limits: string;
  /** What each non-ok status means for this tool (§12.2 "политика пустого ответа"). */
  emptyPolicy: Partial<Record<ToolStatus, string>>;
}

export const toolSpecs: Record<ToolName, ToolSpec> = {
  resolve_counterparty: {
    purpose:
      "Находит контрагента по названию, ИНН, коду (counterparty_id) или части названия; необязательный фильтр по роли (поставщик/покупатель).",
    errors: "Нет специфичных ошибок: пустой запрос отклоняется схемой.",
    limits: "Не более 5 кандидатов; нечёткий поиск по подстроке и словам названия.",
    emptyPolicy: {
      no_match: "ни один контрагент не подходит — сущность не привязана (ENTITY_NOT_RESOLVED)",
      ambiguous: "несколько кандидатов с близкой оценкой — нужна привязка пользователем",
    },
  },
  resolve_period_or_asof: {
    purpose:
      "Разбирает дату отсечения или период из слов пользователя («на 31.03.2026», «на конец марта»); без текста — возвращает рабочую дату базы.",
    errors: "Текст, в котором нет даты, — no_match.",
    limits: "Понимает ДД.ММ.ГГГГ, ГГГГ-ММ-ДД, «31 марта [2026]», «конец/начало <месяца>», «сегодня».",
    emptyPolicy: { no_match: "дату из текста извлечь нельзя — нужен вопрос пользователю или рабочая дата с пометкой" },
  },
  get_open_supplier_settlements: {
    purpose:
      "Остатки взаиморасчётов с поставщиками на дату по регистру расчётов (в разрезе договоров), с просроченной частью.",
    errors: "Неизвестный counterparty_id — unbound_entity.",
    limits: "Только контрагенты с ролью «поставщик»; знак: + наш долг поставщику, − выданный аванс.",
    emptyPolicy: {
      empty: "движения по регистру до даты есть, но все остатки нулевые — это находка «хвостов нет»",
      no_match: "до этой даты в регистре нет ни одного движения — данных нет, вывод делать нельзя (NO_MATCH_IN_1C)",
      unbound_entity: "указанного контрагента нет в базе",
    },
  },
  get_unclosed_documents_for_counterparty: {
    purpose: "Документы поступления контрагента, не закрытые оплатами на дату (сумма, оплачено, остаток, проведён ли).",
    errors: "Неизвестный counterparty_id — unbound_entity.",
    limits: "Учитываются только распределения оплат с датой не позже даты отсечения.",
    emptyPolicy: {
      empty: "документы есть, все закрыты оплатами",
      no_match: "у контрагента нет документов до этой даты",
      unbound_entity: "указанного контрагента нет в базе",
    },
  },
  get_document_movements: {
    purpose: "Движения документа по регистру расчётов с поставщиками.",
    errors: "Неизвестный document_id — unbound_entity.",
    limits: "Один регистр: «Расчёты с поставщиками».",
    emptyPolicy: {
      empty: "документ существует, но движений не сделал (например, не проведён)",
      unbound_entity: "такого документа нет",
    },
  },
  get_payment_chain: {
    purpose: "Оплаты контрагенту (и от него) с распределением по документам-основаниям; признак проведения.",
    errors: "Неизвестный counterparty_id — unbound_entity.",
    limits: "Не более 50 оплат; до даты отсечения, если она указана.",
    emptyPolicy: {
      empty: "контрагент найден, оплат нет — это находка",
      unbound_entity: "указанного контрагента нет в базе",
    },
  },
  get_balance_as_of: {
    purpose: "Сальдо расчётов с контрагентом на дату по регистру, с разбивкой по договорам.",
    errors: "Неизвестный counterparty_id — unbound_entity.",
    limits: "Только регистр расчётов; документы и оплаты не пересчитываются.",
    emptyPolicy: {
      no_match: "до даты по контрагенту нет движений — сальдо не подтверждено данными",
      unbound_entity: "указанного контрагента нет в базе",
    },
  },
  get_related_closing_documents: {
    purpose: "Закрывающие и подтверждающие документы для документа: счёт-фактура к поступлению, поступление к авансу.",
    errors: "Неизвестный document_id — unbound_entity.",
    limits: "Ожидаемые виды зависят от вида документа; отсутствующие перечисляются в missing_kinds.",
    emptyPolicy: {
      empty: "ни одного закрывающего документа нет — см. missing_kinds (MISSING_SUPPORTING_DOCUMENT)",
      unbound_entity: "такого документа нет",
    },
  },
};

/** The description an MCP client (and the planner prompt) sees for a tool. */
export function describeTool(name: ToolName): string {
  const s = toolSpecs[name];
  const empty = Object.entries(s.emptyPolicy)
    .map(([k, v]) => `${k}: ${v}`)
    .join("; ");
  return `${s.purpose} Ошибки: ${s.errors} Ограничения: ${s.limits} Пустой результат — ${empty}.`;
}
