// The deterministic Answer Composer: a FinalAnswerPackage with the five blocks of seed 002 §9.1
// built only from the EvidenceBundle and the CoverageReport. Every claim cites fact ids, or is
// marked inference or unknown. It is the offline answer, the model's draft, and its fallback.
import type { Claim, CoverageReport, EvidenceBundle, Fact, FinalAnswerPackage, Premise, ToolRun } from "./artifacts";
import { money, ruDate } from "./evidence-builder";
import type { TurnScope } from "./frame-resolve";
import { READINGS } from "./glossary";
import { reasonInfo } from "./reason-codes";

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

const TOOL_RU: Record<string, string> = {
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
}

export function composeAnswer(i: ComposeInput): FinalAnswerPackage {
  const { bundle: b, coverage: c } = i;
  const claims: Claim[] = [];
  const claim = (text: string, kind: Claim["kind"], facts: (Fact | undefined)[] = []) => {
    const ids = facts.filter(Boolean).map((f) => f!.fact_id);
    claims.push({
      claim_id: `K${claims.length + 1}`,
      text,
      kind: kind === "evidence" && ids.length === 0 ? "inference" : kind,
      evidence_ids: ids,
    });
    return text + (ids.length ? ` ${cite(...facts)}` : kind === "inference" ? " (вывод)" : "");
  };
  const dateFact = b.facts.find((f) => f.type === "as_of_date");
  const on = dateFact ? ruDate(String(dateFact.value)) : null;
  const found: string[] = [];
  let direct: string;

  // Found: balances with the documents behind them, advances, conflicts.
  const open = b.facts.filter((f) => f.type === "open_balance" || f.type === "balance");
  const byCp = new Map<string, Fact[]>();
  for (const f of open) byCp.set(f.entity_id ?? f.entity, [...(byCp.get(f.entity_id ?? f.entity) ?? []), f]);
  for (const [cp, fs] of byCp) {
    const total = fs.reduce((s, f) => s + (f.value as number), 0);
    const name = fs[0]!.entity;
    if (total < 0)
      found.push(claim(`${name}: выдан аванс ${money(-total)}, поставка на эту сумму ещё не отражена`, "evidence", fs));
    else {
      const overdue = fs.reduce((s, f) => s + Number(f.details.overdue_amount ?? 0), 0);
      const due = fs
        .map((f) => f.details.oldest_due_date)
        .filter(Boolean)
        .sort()[0] as string | undefined;
      const contracts = fs.map((f) => f.details.contract).filter(Boolean);
      found.push(
        claim(
          `${name}: остаток ${money(total)}${contracts.length ? ` по договору ${contracts.join(", ")}` : ""}${overdue > 0 ? `, из них просрочено ${money(overdue)} (срок оплаты истёк ${ruDate(String(due))})` : ""}`,
          "evidence",
          fs,
        ),
      );
    }
    for (const d of b.facts.filter((f) => f.type === "unclosed_document" && f.entity_id === cp)) {
      found.push(
        "  " +
          claim(
            `не оплачено: ${d.details.kind} № ${d.details.number} от ${ruDate(String(d.details.date))} — ${money(d.value as number)} из ${money(Number(d.details.amount))}`,
            "evidence",
            [d],
          ),
      );
    }
  }
  if (i.scope.intent === "unclosed_documents" || i.scope.intent === "payment_chain") {
    for (const d of b.facts.filter((f) => f.type === "unclosed_document"))
      found.push(
        claim(
          `${d.details.kind} № ${d.details.number} от ${ruDate(String(d.details.date))}: не оплачено ${money(d.value as number)} из ${money(Number(d.details.amount))}${d.details.posted ? "" : " (документ не проведён)"}`,
          "evidence",
          [d],
        ),
      );
  }
  if (i.scope.intent === "payment_chain") {
    for (const p of b.facts.filter((f) => f.type === "payment")) {
      const alloc = (p.details.allocations as { document_number: string; amount: number }[]) ?? [];
      found.push(
        claim(
          `оплата № ${p.details.number} от ${ruDate(String(p.details.date))} — ${money(p.value as number)}${alloc.length ? `, в счёт поступления ${alloc.map((a) => `№ ${a.document_number}`).join(", ")}` : ", без распределения (аванс)"}${p.details.posted ? "" : "; не проведена"}`,
          "evidence",
          [p],
        ),
      );
    }
  }
  for (const k of b.conflicts) {
    const facts = k.fact_ids.map((id) => b.facts.find((f) => f.fact_id === id));
    found.push(claim(`${k.entity}: данные расходятся. ${k.description}`, "evidence", facts));
  }
  const none = b.facts.find((f) => f.type === "no_open_balance");
  if (none)
    found.push(
      claim(
        `${none.details.overdue_only ? "просроченных остатков" : "ненулевых остатков"} нет (просмотрено движений регистра: ${String(none.details.movements_scanned)})`,
        "evidence",
        [none],
      ),
    );

  const partial = c.outcome === "PARTIALLY_ANSWERED";
  const suppliers = [...byCp.values()].filter((fs) => fs.reduce((s, f) => s + (f.value as number), 0) > 0);
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
  claims.unshift({
    claim_id: "K0",
    text: direct,
    kind: found.length || none ? "inference" : "unknown",
    evidence_ids: [],
  });

  const checked: string[] = [];
  // A relative date («вчера») shows the day it became and what it was counted from.
  const relative = dateFact?.details.relative
    ? ` («${i.scope.time.text}», отсчитано от рабочей даты базы ${ruDate(String(dateFact.details.working_date))})`
    : "";
  for (const p of i.scope.premises)
    checked.push(
      `${p.label}: ${p.kind === "time_scope" && dateFact ? ruDate(String(dateFact.value)) + relative : p.kind === "business_term" ? (READINGS[p.value as keyof typeof READINGS]?.ru ?? p.value) : p.value} — ${STATUS_RU[p.status]}`,
    );
  const binding = b.entity_bindings.find((e) => e.status === "bound");
  if (binding)
    checked.push(
      `Контрагент «${binding.surface}» привязан к ${binding.resolved_to} ${cite(b.facts.find((f) => f.type === "entity_binding" && f.entity_id === binding.entity_id))}`,
    );
  const tools = [
    ...new Set(i.toolRuns.filter((r) => r.status !== "skipped").map((r) => TOOL_RU[r.tool_name] ?? r.tool_name)),
  ];
  if (tools.length)
    checked.push(
      `Источники: ${tools.join("; ")} (вызовов: ${i.toolRuns.filter((r) => r.status !== "skipped").length})`,
    );
  if (i.offline) checked.push("Ответ собран без языковой модели (офлайн-режим), только из данных учёта");
  else if (i.interpretedBy === "deterministic" && c.outcome !== "BLOCKED_BY_TOOLING")
    checked.push("Вопрос разобран правилами: языковая модель подключена, но не дала ответа по схеме");

  const notEstablished = [...c.uncovered_points];
  // Specific findings only: a bare code description («нужно подтверждение») adds nothing the blocks do not say.
  // …and a finding already stated under "found" (a conflict's description) is not repeated.
  const stated = (m: string) => found.some((f) => f.includes(m.slice(m.indexOf(": ") + 2)));
  for (const w of c.why_partial)
    if (
      w.message !== reasonInfo[w.reason_code].ru &&
      !notEstablished.some((u) => u.includes(w.message)) &&
      !stated(w.message)
    )
      notEstablished.push(w.message);
  if (notEstablished.length === 0)
    for (const w of c.why_partial)
      if (!["ASSUMPTION_APPLIED_EXPLICITLY", "NEEDS_USER_CONFIRMATION"].includes(w.reason_code))
        notEstablished.push(w.message);
  const next = [...(i.clarifying_question ? [i.clarifying_question] : []), ...c.next_best_actions];
  for (const u of notEstablished)
    claims.push({ claim_id: `K${claims.length}`, text: u, kind: "unknown", evidence_ids: [] });

  const uniq = (xs: string[]) => xs.filter((x, k) => xs.indexOf(x) === k);
  // Off-topic: nothing was checked, so there is nothing to list under the evidence headings.
  const misrouted = c.outcome === "MISROUTED";
  const blocks = {
    direct,
    checked: misrouted ? [] : uniq(checked),
    found: misrouted ? [] : found.length ? uniq(found) : ["Фактов по вопросу не получено."],
    not_established: misrouted
      ? []
      : notEstablished.length
        ? uniq(notEstablished)
        : c.outcome === "FULLY_ANSWERED"
          ? ["Пробелов не обнаружено."]
          : ["Ответ неполный — см. коды причин."],
    next_step: next.length ? uniq(next) : ["Ничего уточнять не нужно."],
  };
  return {
    short_answer: direct,
    user_facing_answer: render(blocks),
    blocks,
    evidence_summary: found.map((f) => f.trim()),
    limitations: notEstablished,
    clarifying_question: i.clarifying_question,
    claims,
    composed_by: "deterministic",
  };
}

export function render(b: FinalAnswerPackage["blocks"]): string {
  const list = (xs: string[]) => xs.map((x) => (x.startsWith("  ") ? `  - ${x.trim()}` : `- ${x}`)).join("\n");
  // A block with nothing in it is left out rather than shown empty.
  const parts: [string, string[]][] = [
    [BLOCK_TITLES[1], b.checked],
    [BLOCK_TITLES[2], b.found],
    [BLOCK_TITLES[3], b.not_established],
    [BLOCK_TITLES[4], b.next_step],
  ];
  return [
    `**${BLOCK_TITLES[0]}.** ${b.direct}`,
    ...parts.filter(([, xs]) => xs.length).map(([title, xs]) => `**${title}.**\n${list(xs)}`),
  ].join("\n\n");
}
