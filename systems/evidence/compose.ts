// The deterministic Answer Composer: the run's claims menu (claims-menu.ts) built only from the
// EvidenceBundle and the CoverageReport — every sentence the answer may show, with its kind and
// the fact ids it states — and the engine's own choice from it. Rendered (answer-choice.ts), that
// choice is the offline answer, the model's suggestion, and its fallback.
import type { CoverageReport, EvidenceBundle, Fact, FinalAnswerPackage, Premise, ToolRun } from "./artifacts";
import { packageOf, render, resolveChoice } from "./answer-choice";
import { derivedClaims, askedClaims, factClaims } from "./claims-derived";
import { emptyChoice, menuBuilder, type ClaimsMenu } from "./claims-menu";
import { money, ruDate } from "./evidence-builder";
import type { TurnScope } from "./frame-resolve";
import { READINGS } from "./glossary";
import { reasonInfo } from "./reason-codes";
import { TOOLING } from "./critic-rules";

export const BLOCK_TITLES = [
  "Коротко",
  "Что проверено",
  "Что найдено",
  "Что не удалось установить",
  "Что уточнить / следующий шаг",
] as const;

const STATUS_RU: Record<Premise["status"], string> = {
  confirmed: "подтверждено вами",
  inherited: "из предыдущего вопроса",
  assumed: "допущение, не подтверждено",
};
const cite = (...facts: (Fact | undefined)[]) =>
  facts
    .filter(Boolean)
    .map((f) => `[${f!.fact_id}]`)
    .join("");
const idsOf = (facts: (Fact | undefined)[]) => facts.filter(Boolean).map((f) => f!.fact_id);

export const TOOL_RU: Record<string, string> = {
  resolve_counterparty: "справочник контрагентов",
  resolve_period_or_asof: "дата отсечения",
  get_open_supplier_settlements: "регистр «Расчёты с поставщиками» (остатки)",
  get_unclosed_documents_for_counterparty: "документы поступления и их оплата",
  get_document_movements: "движения документов по регистру",
  get_payment_chain: "оплаты и их распределение",
  get_balance_as_of: "сальдо по регистру расчётов",
  get_related_closing_documents: "подтверждающие документы (счета-фактуры)",
};

export interface ComposeInput {
  scope: TurnScope;
  coverage: CoverageReport;
  bundle: EvidenceBundle;
  toolRuns: ToolRun[];
  clarifying_question: string | null;
  offline: boolean;
  /** Who read the question; with a model connected, "deterministic" means the model's reading failed. */
  interpretedBy?: "llm" | "deterministic";
  /** The user's words: a direct question («Сколько всего…?») gets its derived claim in «Коротко». */
  question?: string;
}

export function composeAnswer(i: ComposeInput): FinalAnswerPackage {
  return composeWithMenu(i).draft;
}

/** The menu and the draft: the engine's choice rendered by the same renderer as the model's. */
export function composeWithMenu(i: ComposeInput): { menu: ClaimsMenu; draft: FinalAnswerPackage } {
  const menu = composeMenu(i);
  const resolved = resolveChoice(menu, { ...menu.engine, opening: null, closing: null });
  return { menu, draft: packageOf(resolved, i.clarifying_question, "deterministic") };
}

export function composeMenu(i: ComposeInput): ClaimsMenu {
  const { bundle: b, coverage: c } = i;
  const m = menuBuilder();
  const engine = emptyChoice();
  const dateFact = b.facts.find((f) => f.type === "as_of_date");
  const on = dateFact ? ruDate(String(dateFact.value)) : null;
  const misrouted = c.outcome === "MISROUTED";
  const found = (kind: Parameters<typeof m.add>[0]["kind"], text: string, facts: (Fact | undefined)[], extra = {}) => {
    const ids = idsOf(facts);
    const id = m.add({ kind, text: `${text}${ids.length ? ` ${cite(...facts)}` : ""}`, facts: ids, ...extra });
    engine.found.push(id);
    return id;
  };

  // Found: balances with the documents behind them, advances, conflicts.
  const open = b.facts.filter((f) => f.type === "open_balance" || f.type === "balance");
  const byCp = new Map<string, Fact[]>();
  for (const f of open) byCp.set(f.entity_id ?? f.entity, [...(byCp.get(f.entity_id ?? f.entity) ?? []), f]);
  const conclusion = m.add({ kind: "conclusion", text: conclusionText(i, byCp, on), facts: [], mandatory: "short" });
  engine.short.push(conclusion);
  const docLine = (d: Fact) =>
    `${d.details.kind} № ${d.details.number} от ${ruDate(String(d.details.date))} — ${money(d.value as number)} из ${money(Number(d.details.amount))}`;
  for (const [cp, fs] of byCp) {
    const total = fs.reduce((s, f) => s + (f.value as number), 0);
    const name = fs[0]!.entity;
    const parent =
      total < 0
        ? found("advance_paid", `${name}: выдан аванс ${money(-total)}, поставка на эту сумму ещё не отражена`, fs)
        : found("open_balance", balanceLine(name, total, fs), fs);
    for (const d of b.facts.filter((f) => f.type === "unclosed_document" && f.entity_id === cp)) {
      const id = found("document_unpaid", `${d.entity} — не оплачено: ${docLine(d)}`, [d], { parent });
      const claim = m.claims.find((x) => x.id === id)!;
      claim.nested = `не оплачено: ${docLine(d)} ${cite(d)}`;
    }
  }
  if (i.scope.intent === "unclosed_documents" || i.scope.intent === "payment_chain") {
    for (const d of b.facts.filter((f) => f.type === "unclosed_document"))
      found(
        "document_unpaid",
        `${d.details.kind} № ${d.details.number} от ${ruDate(String(d.details.date))}: не оплачено ${money(d.value as number)} из ${money(Number(d.details.amount))}${d.details.posted ? "" : " (документ не проведён)"}`,
        [d],
      );
  }
  if (i.scope.intent === "payment_chain") {
    for (const p of b.facts.filter((f) => f.type === "payment")) {
      const alloc = (p.details.allocations as { document_number: string; amount: number }[]) ?? [];
      found(
        p.details.posted ? "payment" : "payment_not_posted",
        `оплата № ${p.details.number} от ${ruDate(String(p.details.date))} — ${money(p.value as number)}${alloc.length ? `, в счёт поступления ${alloc.map((a) => `№ ${a.document_number}`).join(", ")}` : ", без распределения (аванс)"}${p.details.posted ? "" : "; не проведена"}`,
        [p],
      );
    }
  }
  const foundTexts: string[] = [];
  for (const k of b.conflicts) {
    const facts = k.fact_ids.map((id) => b.facts.find((f) => f.fact_id === id));
    const id = found("conflict", `${k.entity}: данные расходятся. ${k.description}`, facts, { mandatory: "found" });
    foundTexts.push(m.claims.find((x) => x.id === id)!.text);
  }
  const none = b.facts.find((f) => f.type === "no_open_balance");
  if (none)
    found(
      "no_open_balance",
      `${none.details.overdue_only ? "просроченных остатков" : "ненулевых остатков"} нет (просмотрено движений регистра: ${String(none.details.movements_scanned)})`,
      [none],
    );
  const anyFound = engine.found.length > 0;
  if (!anyFound && !misrouted)
    engine.found.push(m.add({ kind: "no_facts", text: "Фактов по вопросу не получено.", facts: [] }));
  if (misrouted) engine.found.length = 0;

  // Claims the draft does not list: one field of a fact under its own words, and the engine's derivations.
  const listed = new Set(m.claims.flatMap((x) => (x.kind === "document_unpaid" ? x.facts : [])));
  if (!misrouted) {
    factClaims(b, i.toolRuns, listed, m.add);
    derivedClaims(b, i.toolRuns, m.add);
  }
  // The figure the direct question asks for is the answer: it stands in «Коротко» whatever the model chose.
  for (const id of askedClaims(i.question ?? "", m.claims, c.outcome)) {
    engine.short.push(id);
    m.claims.find((x) => x.id === id)!.mandatory = "short";
  }

  if (!misrouted) checkedClaims(i, dateFact, m.add, engine.checked);
  if (!misrouted) gapClaims(i, foundTexts, m.add, engine.not_established);
  nextClaims(i, m.add, engine.next_step);
  // What the model's free text may restate: the user's words, and that a tool failed when one did.
  return { claims: m.claims, engine, said: saidThisTurn(i), faulted: c.reason_codes.some((r) => TOOLING.includes(r)) };
}

/** The user's words this turn: the question and the premises they confirmed or carried over (never an assumption). */
const saidThisTurn = (i: ComposeInput): string[] => [
  ...(i.question ? [i.question] : []),
  ...i.scope.premises
    .filter((p) => p.status !== "assumed")
    .map((p) => `${p.label}: ${String(p.value).replace(/\b(\d{4})-(\d\d)-(\d\d)\b/g, "$3.$2.$1")}`),
];

function balanceLine(name: string, total: number, fs: Fact[]): string {
  const overdue = fs.reduce((s, f) => s + Number(f.details.overdue_amount ?? 0), 0);
  const due = fs
    .map((f) => f.details.oldest_due_date)
    .filter(Boolean)
    .sort()[0] as string | undefined;
  const contracts = fs.map((f) => f.details.contract).filter(Boolean);
  return `${name}: остаток ${money(total)}${contracts.length ? ` по договору ${contracts.join(", ")}` : ""}${overdue > 0 ? `, из них просрочено ${money(overdue)} (срок оплаты истёк ${ruDate(String(due))})` : ""}`;
}

type Add = ReturnType<typeof menuBuilder>["add"];

function checkedClaims(i: ComposeInput, dateFact: Fact | undefined, add: Add, into: string[]) {
  const b = i.bundle;
  const seen = new Set<string>();
  const push = (id: string, text: string) => {
    if (seen.has(text)) return;
    seen.add(text);
    into.push(id);
  };
  // A relative date («вчера») shows the day it became and what it was counted from.
  const relative = dateFact?.details.relative
    ? ` («${i.scope.time.text}», отсчитано от рабочей даты базы ${ruDate(String(dateFact.details.working_date))})`
    : "";
  for (const p of i.scope.premises) {
    const text = `${p.label}: ${p.kind === "time_scope" && dateFact ? ruDate(String(dateFact.value)) + relative : p.kind === "business_term" ? (READINGS[p.value as keyof typeof READINGS]?.ru ?? p.value) : p.value} — ${STATUS_RU[p.status]}`;
    // An assumption is shown whatever the model chose: the answer rests on it.
    push(add({ kind: "premise", text, facts: [], mandatory: p.status === "assumed" ? "checked" : null }), text);
  }
  const binding = b.entity_bindings.find((e) => e.status === "bound");
  if (binding) {
    const fact = b.facts.find((f) => f.type === "entity_binding" && f.entity_id === binding.entity_id);
    const text = `Контрагент «${binding.surface}» привязан к ${binding.resolved_to} ${cite(fact)}`;
    push(add({ kind: "binding", text, facts: idsOf([fact]) }), text);
  }
  const runs = i.toolRuns.filter((r) => r.status !== "skipped");
  const tools = [...new Set(runs.map((r) => TOOL_RU[r.tool_name] ?? r.tool_name))];
  if (tools.length) {
    const text = `Источники: ${tools.join("; ")} (вызовов: ${runs.length})`;
    push(add({ kind: "sources", text, facts: [] }), text);
  }
  const method = i.offline
    ? "Ответ собран без языковой модели (офлайн-режим), только из данных учёта"
    : i.interpretedBy === "deterministic" && i.coverage.outcome !== "BLOCKED_BY_TOOLING"
      ? "Вопрос разобран правилами: языковая модель подключена, но не дала ответа по схеме"
      : null;
  if (method) push(add({ kind: "method", text: method, facts: [] }), method);
}

// Every gap and action in the CoverageReport is the engine's sentence: the rules write theirs, and
// the model critic's closed-set points are worded by critic-kinds.ts (`mergeCritique`) before they
// are merged — its free text never enters the report. So each becomes a claim of the menu as it is.
// What a fault left unchecked (`coverage.mandatory`) is a mandatory claim: shown whatever the model chose.

function gapClaims(i: ComposeInput, foundTexts: string[], add: Add, into: string[]) {
  const c = i.coverage;
  const texts: string[] = [];
  const push = (text: string) => {
    if (!texts.includes(text)) texts.push(text);
  };
  for (const u of c.uncovered_points) push(u);
  // Specific findings only: a bare code description («нужно подтверждение») adds nothing the blocks do not say.
  // …and a finding already stated under "found" (a conflict's description) is not repeated.
  const stated = (msg: string) => foundTexts.some((f) => f.includes(msg.slice(msg.indexOf(": ") + 2)));
  for (const w of c.why_partial)
    if (w.message !== reasonInfo[w.reason_code].ru && !texts.some((x) => x.includes(w.message)) && !stated(w.message))
      push(w.message);
  if (texts.length === 0)
    for (const w of c.why_partial)
      if (!["ASSUMPTION_APPLIED_EXPLICITLY", "NEEDS_USER_CONFIRMATION"].includes(w.reason_code)) push(w.message);
  // A mandatory item is its own claim even when another sentence happens to contain it.
  for (const m of c.mandatory?.not_established ?? []) if (!texts.includes(m)) texts.push(m);
  for (const t of texts) into.push(add({ kind: "gap", text: t, facts: [], mandatory: "not_established" }));
  if (texts.length === 0)
    into.push(
      c.outcome === "FULLY_ANSWERED"
        ? add({ kind: "no_gaps", text: "Пробелов не обнаружено.", facts: [] })
        : add({ kind: "gap", text: "Ответ неполный — см. коды причин.", facts: [], mandatory: "not_established" }),
    );
}

function nextClaims(i: ComposeInput, add: Add, into: string[]) {
  const c = i.coverage;
  const must = new Set(c.mandatory?.next_step ?? []);
  const seen = new Set<string>();
  const push = (text: string, kind: "next_step" | "clarifying_question") => {
    if (seen.has(text)) return;
    seen.add(text);
    const mandatory = kind === "clarifying_question" || must.has(text) ? "next_step" : null;
    into.push(add({ kind, text, facts: [], mandatory }));
  };
  if (i.clarifying_question) push(i.clarifying_question, "clarifying_question");
  for (const a of [...c.next_best_actions, ...must]) push(a, "next_step");
  // Offered only when nothing is left to do: it never stands next to a step the run calls for.
  if (!into.length) into.push(add({ kind: "nothing_to_clarify", text: "Ничего уточнять не нужно.", facts: [] }));
}

/** The conclusion the outcome class allows: the CoverageReport's, never the model's. */
function conclusionText(i: ComposeInput, byCp: Map<string, Fact[]>, on: string | null): string {
  const { bundle: b, coverage: c } = i;
  const open = b.facts.filter((f) => f.type === "open_balance" || f.type === "balance");
  const partial = c.outcome === "PARTIALLY_ANSWERED";
  const suppliers = [...byCp.values()].filter((fs) => fs.reduce((s, f) => s + (f.value as number), 0) > 0);
  let direct: string;
  switch (c.outcome) {
    case "FULLY_ANSWERED":
    case "PARTIALLY_ANSWERED":
      if (i.scope.intent === "detect_open_supplier_settlements") {
        const reading = READINGS[i.scope.reading ?? "open_settlement_balance"].short;
        const sum = (fs: Fact[]) => fs.reduce((s, f) => s + (f.value as number), 0);
        const advances = [...byCp.values()].filter((fs) => sum(fs) < 0);
        const advanced = advances.map((fs) => `${fs[0]!.entity} — ${money(-sum(fs))}`).join("; ");
        // An advance is an open balance too (in our favour): with advances only, the answer says
        // there is no debt of ours, never that nothing open was found.
        direct = suppliers.length
          ? `На ${on} ${reading} — наш долг перед поставщиками (${suppliers.length}): ${suppliers.map((fs) => `${fs[0]!.entity} — ${money(sum(fs))}`).join("; ")}.`
          : advances.length
            ? `На ${on} нашего долга перед поставщиками нет; открыты выданные авансы: ${advanced}.`
            : `На ${on} ${reading} по поставщикам не найдено.`;
        if (advances.length && suppliers.length) direct += ` Кроме того, не закрыты выданные авансы: ${advanced}.`;
      } else if (i.scope.intent === "counterparty_balance") {
        const total = open.reduce((s, f) => s + (f.value as number), 0);
        direct = open.length
          ? `Сальдо расчётов с ${open[0]!.entity} на ${on}: ${money(Math.abs(total))} — ${total > 0 ? "наш долг поставщику" : total < 0 ? "выданный аванс" : "расчёты закрыты"}.`
          : `Сальдо на ${on} не получено.`;
      } else if (i.scope.intent === "unclosed_documents") {
        const docs = b.facts.filter((f) => f.type === "unclosed_document");
        direct = docs.length
          ? `На ${on} не закрыты оплатой ${docs.length} документ(а) на ${money(docs.reduce((s, f) => s + (f.value as number), 0))}.`
          : `На ${on} незакрытых документов поступления нет.`;
      } else {
        const pays = b.facts.filter((f) => f.type === "payment");
        direct = pays.length
          ? `Найдено оплат: ${pays.length} на ${money(pays.reduce((s, f) => s + (f.value as number), 0))}.`
          : "Оплат не найдено.";
      }
      if (partial) direct += " Ответ частичный — ограничения ниже.";
      break;
    case "BLOCKED_BY_AMBIGUITY": {
      const dateIssue = c.why_partial.find((w) => w.reason_code === "INVALID_DATE" || w.reason_code === "FUTURE_DATE");
      direct = dateIssue
        ? `${dateIssue.message.replace(/\.$/, "")} — проверить расчёты на эту дату нельзя, поэтому ответа по существу нет.`
        : "Чтобы ответить точно, нужно одно уточнение — иначе ответ может ввести в заблуждение.";
      break;
    }
    case "FAILED_TO_BIND_ENTITIES": {
      const role = c.why_partial.find((w) => w.reason_code === "ENTITY_ROLE_MISMATCH");
      if (role) {
        direct = `${role.message.replace(/\.$/, "")}. Вопрос — о расчётах с поставщиком, а этот контрагент поставщиком не числится, поэтому в регистре расчётов с поставщиками сведений о нём нет.`;
        break;
      }
      direct = `Не удалось найти в учётной базе ${
        b.entity_bindings
          .filter((e) => e.status === "not_found")
          .map((e) => `«${e.surface}»`)
          .join(", ") || "контрагента из вопроса"
      } — по нему ответить нельзя.`;
      break;
    }
    case "BLOCKED_BY_MISSING_DATA": {
      const route = c.why_partial.find((w) => w.reason_code === "ROUTE_DOES_NOT_COVER_ROLE");
      if (route) {
        direct = `${route.message}. Поэтому ответа по этим данным нет — это не значит, что долга нет.`;
        break;
      }
      direct = `За ${on ? `период до ${on}` : "этот период"} в учётных данных нет записей — вывод сделать нельзя (это не означает, что долгов нет).`;
      break;
    }
    case "BLOCKED_BY_TOOLING":
      direct = c.reason_codes.includes("MODEL_OUTPUT_INVALID")
        ? "Языковая модель подключена, но дважды ответила не по схеме, а без неё этот вопрос разобрать не получилось. Это сбой модели, а не ответ по данным учёта."
        : c.reason_codes.includes("MODEL_REQUIRED") && !i.offline
          ? "Языковая модель не ответила, а без неё этот вопрос разобрать не получилось. Это сбой подключения, а не ответ по данным учёта."
          : c.reason_codes.includes("MODEL_REQUIRED")
            ? "Этот вопрос не получилось разобрать без языковой модели, а она не подключена."
            : "Не удалось получить данные из учётной системы: источник не ответил или ответил ошибкой, поэтому ответа по существу нет.";
      break;
    default:
      direct =
        "Этот вопрос вне моей области: я отвечаю по данным учёта — о расчётах с контрагентами, документах и оплатах.";
  }
  return direct;
}

export { render };
