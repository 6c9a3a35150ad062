// The deterministic planner: a proof plan per intent (seed 002 §7.2, §8.3) — atomic steps,
// required vs optional, fallbacks and stop conditions. Also the check every model-written plan
// must pass, and the normalization that pins the plan to the trusted scope.
import type { ExecutionPlan, PlanStep } from "./artifacts";
import type { TurnScope } from "./frame-resolve";
import { READINGS } from "./glossary";
import type { PlannerOutput } from "./model-outputs";
import { TOOL_RU } from "./critic-kinds";
import { TOOL_NAMES, toolInputs, type ToolName } from "./tool-contracts";
import { NAME_CHECK } from "./tool-strings";

const step = (
  step_id: string,
  type: string,
  tool: ToolName | null,
  input: Record<string, unknown>,
  required: boolean,
  purpose: string,
  depends_on: string[] = [],
  for_each: string | null = null,
  filter: string | null = null,
): PlanStep => ({ step_id, type, tool, input, required, depends_on, for_each, filter, purpose });

export const STOP_CONDITIONS = [
  "success_criteria_fully_covered",
  "critical_ambiguity_requires_user_input",
  "tooling_failure_no_evidence",
  "max_execution_budget_reached",
];

/** The tool that must succeed for an intent to be answered at all. */
export const CORE_TOOL: Record<Exclude<TurnScope["intent"], "unsupported">, ToolName> = {
  detect_open_supplier_settlements: "get_open_supplier_settlements",
  counterparty_balance: "get_balance_as_of",
  unclosed_documents: "get_unclosed_documents_for_counterparty",
  payment_chain: "get_payment_chain",
};

export function planFor(scope: TurnScope, requestId: string): ExecutionPlan {
  const date = step(
    "S2",
    "resolve_as_of_date",
    "resolve_period_or_asof",
    scope.time.text ? { text: scope.time.text } : {},
    true,
    scope.time.text
      ? "Прочитать дату отсечения из слов пользователя"
      : "Дата не указана: взять рабочую дату базы (с пометкой)",
  );
  // The role the user asked about is checked at binding: a customer-only party is not a supplier (§12.3).
  const who = (required: boolean) =>
    step(
      "S1",
      "resolve_counterparty",
      "resolve_counterparty",
      { query: scope.counterparty?.surface ?? "", ...(scope.role === "supplier" ? { role: "supplier" } : {}) },
      required,
      "Привязать контрагента к справочнику",
    );
  const asOf = "$S2.as_of_date";
  let steps: PlanStep[];
  let goal: string;
  const fallbacks: string[] = [];
  if (scope.intent !== "unsupported" && scope.role === "customer") {
    // A customer's debt to us is not in the supplier settlements register: bind and date only,
    // so the answer says which route is missing instead of reading an unrelated balance.
    return {
      request_id: requestId,
      plan_version: 1,
      goal: `Расчёты с покупателем${scope.counterparty ? ` «${scope.counterparty.surface}»` : "ми"} — вне регистра расчётов с поставщиками`,
      planned_by: "deterministic",
      steps: scope.counterparty ? [who(true), date] : [date],
      fallbacks: [],
      stop_conditions: STOP_CONDITIONS,
    };
  }
  switch (scope.intent) {
    case "detect_open_supplier_settlements": {
      const reading = scope.reading ?? "open_settlement_balance";
      goal = `Подтвердить наличие незакрытых обязательств по поставщикам (трактовка: ${READINGS[reading].short})`;
      const filterCp = scope.counterparty ? { counterparty_id: "$S1.counterparty_id" } : {};
      steps = [
        ...(scope.counterparty
          ? [{ ...who(true), input: { query: scope.counterparty.surface, role: "supplier" } }]
          : []),
        date,
        step(
          "S3",
          "resolve_business_term",
          null,
          { term: "хвосты", reading },
          true,
          `Трактовать термин как «${READINGS[reading].short}»`,
        ),
        step(
          "S4",
          "query_open_settlements",
          "get_open_supplier_settlements",
          { as_of_date: asOf, ...filterCp, ...(reading === "overdue_settlements" ? { overdue_only: true } : {}) },
          true,
          "Остатки расчётов с поставщиками на дату",
          ["S2", ...(scope.counterparty ? ["S1"] : [])],
        ),
        step(
          "S5",
          "query_unclosed_documents",
          "get_unclosed_documents_for_counterparty",
          { counterparty_id: "$each.counterparty_id", as_of_date: asOf },
          reading === "unclosed_documents",
          "Какие документы образуют остаток",
          ["S4"],
          "S4.rows",
          "balance > 0",
        ),
        step(
          "S6",
          "query_payment_chain",
          "get_payment_chain",
          { counterparty_id: "$each.counterparty_id", as_of_date: asOf },
          false,
          "Сверить остаток с оплатами (в т.ч. непроведёнными)",
          ["S4"],
          "S4.rows",
        ),
        step(
          "S7",
          "query_supporting_documents",
          "get_related_closing_documents",
          { document_id: "$each.document_id" },
          false,
          "Проверить подтверждающие документы к незакрытым поступлениям",
          ["S5"],
          "S5.rows",
        ),
      ];
      fallbacks.push(
        "Если термин «хвосты» не уточнён — применить трактовку «незакрытые остатки» с явной пометкой",
        "Если дата не указана — использовать рабочую дату с явной пометкой",
        "Если углублённая проверка не удалась — ответить по регистру с пометкой о глубине",
      );
      break;
    }
    case "counterparty_balance":
      goal = `Определить и подтвердить сальдо расчётов с контрагентом «${scope.counterparty?.surface}»`;
      steps = [
        who(true),
        date,
        step(
          "S3",
          "query_balance",
          "get_balance_as_of",
          { counterparty_id: "$S1.counterparty_id", as_of_date: asOf },
          true,
          "Сальдо по регистру расчётов",
          ["S1", "S2"],
        ),
        step(
          "S4",
          "query_unclosed_documents",
          "get_unclosed_documents_for_counterparty",
          { counterparty_id: "$S1.counterparty_id", as_of_date: asOf },
          false,
          "Документы, образующие сальдо",
          ["S1", "S2"],
        ),
        step(
          "S5",
          "query_payment_chain",
          "get_payment_chain",
          { counterparty_id: "$S1.counterparty_id", as_of_date: asOf },
          false,
          "Оплаты и их проведение",
          ["S1", "S2"],
        ),
        // A due date is a contract's payment term: the register's balance holds none, so a question
        // that asks for one («До какого числа нужно оплатить …?») reads the party's settlements by
        // contract, which carry the overdue part and the oldest open part's due date.
        ...(scope.asks_due_date
          ? [
              step(
                "S6",
                "query_payment_terms",
                "get_open_supplier_settlements",
                { as_of_date: asOf, counterparty_id: "$S1.counterparty_id" },
                false,
                "Сроки оплаты по договорам: просроченная часть и срок оплаты",
                ["S1", "S2"],
              ),
            ]
          : []),
      ];
      fallbacks.push("Если контрагент не привязан однозначно — показать кандидатов и спросить пользователя");
      break;
    case "unclosed_documents":
      goal = `Найти незакрытые документы контрагента «${scope.counterparty?.surface}»`;
      steps = [
        who(true),
        date,
        step(
          "S3",
          "query_unclosed_documents",
          "get_unclosed_documents_for_counterparty",
          { counterparty_id: "$S1.counterparty_id", as_of_date: asOf },
          true,
          "Незакрытые документы поступления",
          ["S1", "S2"],
        ),
        step(
          "S4",
          "query_supporting_documents",
          "get_related_closing_documents",
          { document_id: "$each.document_id" },
          false,
          "Подтверждающие документы",
          ["S3"],
          "S3.rows",
        ),
        step(
          "S5",
          "query_document_movements",
          "get_document_movements",
          { document_id: "$each.document_id" },
          false,
          "Движения документов по регистру",
          ["S3"],
          "S3.rows",
        ),
      ];
      fallbacks.push("Если контрагент не привязан однозначно — показать кандидатов и спросить пользователя");
      break;
    case "payment_chain":
      goal = `Показать оплаты контрагенту «${scope.counterparty?.surface}» и их распределение`;
      steps = [
        who(true),
        date,
        step(
          "S3",
          "query_payment_chain",
          "get_payment_chain",
          { counterparty_id: "$S1.counterparty_id", as_of_date: asOf },
          true,
          "Оплаты и распределение по документам",
          ["S1", "S2"],
        ),
      ];
      break;
    default:
      goal = "Вопрос вне домена расчётов";
      steps = [];
  }
  return {
    request_id: requestId,
    plan_version: 1,
    goal,
    planned_by: "deterministic",
    steps,
    fallbacks,
    stop_conditions: STOP_CONDITIONS,
  };
}

/**
 * Names in the settlements register's rows are data from a tool: the directory is the reference for
 * a party's name (tool-strings.ts). A run that binds no party reads no directory entry, so the engine
 * appends one directory read per row's counterparty id (resolve_counterparty by code) to whatever
 * plan runs — the built-in one or a model's. It is the engine's check, not a criterion of the
 * question: it is not part of the built-in floor a model plan is measured against.
 */
export function withNameCheck(p: ExecutionPlan): ExecutionPlan {
  const rows = p.steps.find((s) => s.tool === "get_open_supplier_settlements" && !s.for_each);
  if (!rows || p.steps.some((s) => s.tool === "resolve_counterparty")) return p;
  const id = `S${Math.max(0, ...p.steps.map((x) => Number(x.step_id.slice(1)) || 0)) + 1}`;
  return {
    ...p,
    steps: [
      ...p.steps,
      step(
        id,
        NAME_CHECK,
        "resolve_counterparty",
        { query: "$each.counterparty_id" },
        false,
        "Сверить названия контрагентов со справочником",
        [rows.step_id],
        `${rows.step_id}.rows`,
      ),
    ],
  };
}

const REF = /^\$(S\d+|each)\.([a-z_]+)$/;

/** Problems of a model-written plan; empty = acceptable. Ids and dates may only come from tool outputs. */
export function validatePlan(p: PlannerOutput, scope: TurnScope): string[] {
  const issues: string[] = [];
  const seen = new Map<string, PlanStep>();
  for (const s of p.steps) {
    if (seen.has(s.step_id)) issues.push(`${s.step_id}: повторный step_id`);
    for (const d of [...s.depends_on, ...(s.for_each ? [s.for_each.split(".")[0]!] : [])])
      if (!seen.has(d)) issues.push(`${s.step_id}: ссылка на неизвестный или более поздний шаг ${d}`);
    if (s.tool) {
      const shape = toolInputs[s.tool].shape as Record<string, { safeParse: (v: unknown) => { success: boolean } }>;
      for (const k of Object.keys(s.input))
        if (!(k in shape)) issues.push(`${s.step_id}: у ${s.tool} нет параметра ${k}`);
      for (const [k, field] of Object.entries(shape))
        if (!(k in s.input) && !field.safeParse(undefined).success)
          issues.push(`${s.step_id}: не задан обязательный параметр ${k}`);
      for (const [k, v] of Object.entries(s.input)) {
        const ref = typeof v === "string" ? v.match(REF) : null;
        if (typeof v === "string" && v.startsWith("$") && !ref) issues.push(`${s.step_id}: неверная ссылка ${v}`);
        if (ref && ref[1] !== "each" && !seen.has(ref[1]!))
          issues.push(`${s.step_id}: ссылка на неизвестный шаг ${ref[1]}`);
        if (ref && ref[1] === "each" && !s.for_each) issues.push(`${s.step_id}: $each без for_each`);
        if (["as_of_date", "counterparty_id", "document_id"].includes(k) && !ref)
          issues.push(`${s.step_id}: ${k} должен ссылаться на результат инструмента, а не быть литералом`);
      }
    }
    seen.set(s.step_id, s);
  }
  if (scope.intent !== "unsupported") {
    const core = CORE_TOOL[scope.intent];
    if (!p.steps.some((s) => s.tool === core && s.required))
      issues.push(`нет обязательного шага с инструментом ${core}`);
  }
  if (!p.steps.some((s) => s.tool === "resolve_period_or_asof")) issues.push("нет шага resolve_period_or_asof");
  return issues;
}

/** Pins a valid model plan to the trusted scope: the date words and the counterparty are the machine's, not the model's. */
export function normalizePlan(p: PlannerOutput, scope: TurnScope, requestId: string): ExecutionPlan {
  // A step's purpose is shown to the user (gaps, faults): the model's words never are — each step is
  // named as the built-in plan names its tool, else by what the tool checks.
  const floor = planFor(scope, requestId).steps;
  const named = p.steps.map((s) => ({
    ...s,
    purpose:
      floor.find((f) => f.tool === s.tool)?.purpose ??
      (s.tool ? TOOL_RU[s.tool]!.replace(/^\p{Ll}/u, (c) => c.toUpperCase()) : "Вычисление по результатам шагов"),
  }));
  const steps = named.map((s) => {
    if (s.tool === "resolve_period_or_asof") return { ...s, input: scope.time.text ? { text: scope.time.text } : {} };
    if (s.tool === "resolve_counterparty" && scope.counterparty)
      return { ...s, input: { ...s.input, query: scope.counterparty.surface } };
    return s;
  });
  return {
    request_id: requestId,
    plan_version: 1,
    goal: p.goal,
    planned_by: "llm",
    steps,
    fallbacks: p.fallbacks,
    stop_conditions: p.stop_conditions.length ? p.stop_conditions : STOP_CONDITIONS,
  };
}

/**
 * The built-in plan is the floor (§8.3 success criteria): every tool it calls must appear in a
 * model plan, and every step it requires must be required there too. Returns what is missing.
 */
export function missingCoverage(p: ExecutionPlan, floor: ExecutionPlan): string[] {
  const missing: string[] = [];
  for (const s of floor.steps) {
    if (!s.tool) continue;
    const there = p.steps.filter((x) => x.tool === s.tool);
    if (!there.length) missing.push(`нет шага «${s.purpose}» (${s.tool})`);
    else if (s.required && !there.some((x) => x.required))
      missing.push(`шаг «${s.purpose}» (${s.tool}) должен быть обязательным`);
  }
  return missing;
}

/**
 * A model plan extended to the floor: the built-in steps it lacks are appended (ids renumbered,
 * references remapped to the model's own steps for the same tool), and a step the floor requires
 * becomes required. What was added is returned for the trace.
 */
export function extendToFloor(p: ExecutionPlan, floor: ExecutionPlan): { plan: ExecutionPlan; added: string[] } {
  const ids = new Map<string, string>();
  for (const f of floor.steps) {
    const there = f.tool ? p.steps.find((x) => x.tool === f.tool) : undefined;
    if (there) ids.set(f.step_id, there.step_id);
  }
  let next = Math.max(0, ...p.steps.map((x) => Number(x.step_id.slice(1)))) + 1;
  const steps = p.steps.map((x) =>
    floor.steps.some((f) => f.required && f.tool && f.tool === x.tool) ? { ...x, required: true } : x,
  );
  const added: string[] = [];
  for (const f of floor.steps) {
    if (!f.tool || ids.has(f.step_id)) continue;
    const id = `S${next++}`;
    ids.set(f.step_id, id);
    const remap = (v: unknown) =>
      typeof v === "string"
        ? v.replace(/^\$(S\d+)\./, (m, sid: string) => (ids.has(sid) ? `$${ids.get(sid)}.` : m))
        : v;
    steps.push({
      ...f,
      step_id: id,
      input: Object.fromEntries(Object.entries(f.input).map(([k, v]) => [k, remap(v)])),
      depends_on: f.depends_on.filter((d) => ids.has(d)).map((d) => ids.get(d)!),
      for_each: f.for_each ? f.for_each.replace(/^(S\d+)/, (m) => ids.get(m) ?? m) : null,
    });
    added.push(`${id}: ${f.purpose} (${f.tool})`);
  }
  return { plan: { ...p, steps, ...(added.length ? { extended_by_engine: added } : {}) }, added };
}

export const TOOL_CATALOG = TOOL_NAMES;
