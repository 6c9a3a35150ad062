// The Coverage Critic's rules (seed 002 §6.2.7, §8.6): what was asked, what is proven, what is
// not, and why — the outcome class follows from them. Runs on every turn, blocked ones too;
// a model critic may add depth gaps on top (mergeCritique) but never remove one.
import type { CoverageReport, EvidenceBundle, ExecutionPlan, QueryFrame, ToolRun } from "./artifacts";
import { money, ruDate } from "./evidence-builder";
import type { TurnScope } from "./frame-resolve";
import { READINGS } from "./glossary";
import { reasonInfo, sortReasons, type OutcomeClass, type ReasonCode } from "./reason-codes";
import { displayName } from "./tool-strings";
import { shallowerThanFloor } from "./depth-rules";

export interface CriticInput {
  requestId: string;
  frame: QueryFrame | null;
  scope: TurnScope;
  plan: ExecutionPlan | null;
  toolRuns: ToolRun[];
  bundle: EvidenceBundle;
}

export interface RuledCoverage {
  coverage: CoverageReport;
  clarifying_question: string | null;
}

/** The reason codes of a tool that failed (or a step it left undone). */
export const TOOLING: ReasonCode[] = [
  "MCP_TIMEOUT",
  "TOOL_EXECUTION_ERROR",
  "MCP_SCHEMA_ERROR",
  "INVALID_TOOL_OUTPUT",
  "ROUTE_EXECUTION_ABORTED",
];
const OKS = new Set(["success", "empty"]);

// How deep the run's checks went against the built-in plan: depth-rules.ts.
export { shallowerThanFloor };

/** Bindings that only a role the user never stated made unique. */
export function narrowedByInferredRole(bundle: EvidenceBundle, scope: TurnScope) {
  return scope.role_said ? [] : bundle.entity_bindings.filter((b) => b.status === "bound" && b.narrowed_by_role.length);
}

/** What a call was restricted to, in words: a result under a filter is stated for that filter only. */
export function callScope(input: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof input.as_of_date === "string") parts.push(`до ${ruDate(input.as_of_date)}`);
  if (input.counterparty_id) parts.push("по выбранному контрагенту");
  if (input.document_id) parts.push("по выбранному документу");
  if (input.overdue_only) parts.push("среди просроченных");
  return parts.length ? ` (${parts.join(", ")})` : "";
}

export function ruleCoverage(i: CriticInput): RuledCoverage {
  const reasons = new Set<ReasonCode>(i.scope.reasons);
  const why: CoverageReport["why_partial"] = [];
  const covered: string[] = [];
  const uncovered: string[] = [];
  const next: string[] = [];
  const say = (code: ReasonCode, message: string) => {
    reasons.add(code);
    if (!why.some((w) => w.reason_code === code && w.message === message)) why.push({ reason_code: code, message });
  };
  // What a fault left unchecked must reach the user whatever a model writes: named here, in the
  // report, so neither the critic nor the answer can drop it (coverage.mandatory).
  const must = { not_established: [] as string[], next_step: [] as string[] };
  const sayMust = (code: ReasonCode, message: string) => {
    say(code, message);
    if (!must.not_established.includes(message)) must.not_established.push(message);
  };
  const RETRY = "Повторить запрос позже: источник данных не ответил или ответил с ошибкой";
  const nextMust = (text: string) => {
    next.push(text);
    if (!must.next_step.includes(text)) must.next_step.push(text);
  };
  let clarifying = i.scope.clarifying_question;
  const finish = (outcome: OutcomeClass): RuledCoverage => {
    const codes = sortReasons(reasons);
    for (const c of codes)
      if (!why.some((w) => w.reason_code === c)) why.push({ reason_code: c, message: reasonInfo[c].ru });
    const answerability =
      outcome === "FULLY_ANSWERED" ? "full" : outcome === "PARTIALLY_ANSWERED" ? "partial" : "insufficient";
    return {
      coverage: {
        request_id: i.requestId,
        answerability,
        covered_points: covered,
        uncovered_points: uncovered,
        why_partial: why,
        next_best_actions: [...new Set(next)],
        reason_codes: codes,
        outcome,
        critic: { rules: true, model: "skipped", note: null },
        ...(must.not_established.length || must.next_step.length ? { mandatory: must } : {}),
      },
      clarifying_question: clarifying,
    };
  };

  if (i.scope.gate === "model_required") {
    const broken = reasons.has("MODEL_OUTPUT_INVALID");
    uncovered.push(
      broken
        ? "Вопрос не удалось разобрать: языковая модель дважды ответила не по схеме, а правила его не распознали"
        : "Вопрос не удалось разобрать без языковой модели",
    );
    next.push(
      broken
        ? "Переформулировать вопрос проще (например: «По каким поставщикам висят хвосты на 31.03.2026?») или проверить модель: она подключена, но отвечает не по схеме"
        : "Переформулировать вопрос проще (например: «По каким поставщикам висят хвосты на 31.03.2026?») или подключить модель (OPENAI_BASE_URL)",
    );
    if (!broken) reasons.add("MODEL_REQUIRED");
    return finish("BLOCKED_BY_TOOLING");
  }
  if (i.scope.gate === "misrouted") {
    uncovered.push(
      "Вопрос не относится к расчётам с контрагентами, документам и оплатам — данные учёта на него не отвечают",
    );
    next.push("Задать вопрос о расчётах, документах или оплатах контрагентов");
    return finish("MISROUTED");
  }
  if (i.scope.gate === "clarify") {
    reasons.delete("ASSUMPTION_APPLIED_EXPLICITLY"); // nothing ran, so nothing was assumed in an answer
    uncovered.push(...(i.frame?.ambiguities.filter((a) => a.blocking).map((a) => a.text) ?? []));
    if (!uncovered.length) uncovered.push("Без уточнения ответ может ввести в заблуждение");
    next.push("Ответить на уточняющий вопрос");
    return finish("BLOCKED_BY_AMBIGUITY");
  }

  // Premises: an assumption is a gap the answer must name, not a fact.
  for (const p of i.scope.premises) {
    // A party bound only through a role the user never named is said below, with the alternatives.
    if (p.status === "assumed" && p.kind === "entity" && p.key === "counterparty" && p.source !== "tool") {
      uncovered.push(
        `Контрагент «${p.value}» в вопросе не назван — взят ${p.source === "interpreter" ? "из разбора вопроса" : "из предыдущего хода"} как допущение`,
      );
      next.push("Назвать контрагента, если имелся в виду другой");
    }
    if (p.status === "assumed" && p.kind === "business_term") {
      uncovered.push(
        `Трактовка термина «${p.key}» не подтверждена: принято «${READINGS[p.value as keyof typeof READINGS]?.short ?? p.value}»`,
      );
      next.push(
        `Уточнить, считать ли «${p.key}» ${READINGS.open_settlement_balance.ru} или ${READINGS.overdue_settlements.ru}`,
      );
    } else if (p.status !== "assumed" && p.kind === "business_term")
      covered.push(
        `Трактовка термина «${p.key}»: ${READINGS[p.value as keyof typeof READINGS]?.short ?? p.value} (${p.status === "confirmed" ? "подтверждено" : "из предыдущего хода"})`,
      );
  }
  const dateFact = i.bundle.facts.find((f) => f.type === "as_of_date");
  const datePremise = i.scope.premises.find((p) => p.kind === "time_scope");
  if (dateFact && datePremise?.status === "assumed") {
    uncovered.push(
      `Дата отсечения не указана — использована ${i.scope.time.source === "default" ? "рабочая дата базы" : i.scope.time.source === "interpreter" ? "дата, которую вы не называли (предложена при разборе вопроса)," : "дата из предыдущего хода (допущение)"} ${ruDate(String(dateFact.value))}`,
    );
    next.push("Назвать дату отсечения, если нужна другая");
  } else if (dateFact?.details.relative) {
    covered.push(
      `Дата отсечения: ${ruDate(String(dateFact.value))} — относительная дата отсчитана от рабочей даты базы${dateFact.details.working_date ? ` ${ruDate(String(dateFact.details.working_date))}` : ""}`,
    );
    reasons.add("RELATIVE_DATE_RESOLVED");
  } else if (dateFact) covered.push(`Дата отсечения: ${ruDate(String(dateFact.value))}`);

  // Steps: required ones decide whether there is an answer at all.
  let bindAmbiguous = false,
    bindMissing = false,
    toolingBlocked = false,
    dataMissing = false,
    dateRejected = false,
    routeMismatch = false;
  // §12.3: a counterparty whose only role is one the supplier register does not keep, or a
  // customer's balance asked for, is outside this route — not "no records".
  const boundRoles = i.bundle.facts.find((f) => f.type === "entity_binding")?.details.roles as string[] | undefined;
  if (
    i.scope.role === "customer" ||
    (i.scope.intent !== "detect_open_supplier_settlements" && boundRoles && !boundRoles.includes("supplier"))
  ) {
    routeMismatch = true;
    const who =
      i.bundle.entity_bindings.find((b) => b.status === "bound")?.resolved_to ?? i.scope.counterparty?.surface ?? null;
    say(
      "ROUTE_DOES_NOT_COVER_ROLE",
      `Доступный регистр ведёт только расчёты с поставщиками; ${i.scope.role === "customer" ? (who ? `расчёты с ${who} как с покупателем` : "расчёты с покупателями") : `${who} числится только покупателем, и расчёты с ним`} в нём не отражаются`,
    );
    next.push("Спросить о расчётах с поставщиками или проверить расчёты с покупателями в самой 1С");
  }
  // A model plan shallower than the built-in one proves less and must not look complete (§7.5,
  // §8.6): a per-row step that ran for fewer rows than the built-in plan would have run it for.
  for (const gap of shallowerThanFloor(i)) say("EVIDENCE_DEPTH_LIMIT", gap);
  // Steps skipped after a failure are named once, together, not one line each.
  const aborted: string[] = [];
  for (const s of i.plan?.steps ?? []) {
    if (!s.tool) continue;
    const runs = i.toolRuns.filter((r) => r.step_id === s.step_id);
    for (const r of runs) {
      if (r.error_code === "ROUTE_EXECUTION_ABORTED") {
        if (!aborted.includes(s.purpose)) aborted.push(s.purpose);
        reasons.add(r.error_code);
        continue;
      }
      // A human sentence for the answer; the tool's raw error text stays in the tool run and the trace.
      if (r.error_code && TOOLING.includes(r.error_code))
        sayMust(
          r.error_code,
          `«${s.purpose}»${s.required ? " (обязательная проверка)" : ""}: ${r.status === "timeout" ? "источник данных не ответил вовремя" : reasonInfo[r.error_code].ru}`,
        );
    }
    if (runs.length === 0 || runs.some((r) => OKS.has(r.status))) continue;
    const failed = runs[0]!;
    if (!s.required) {
      // A step skipped because an earlier one failed is a consequence, already reported there.
      if (failed.status !== "skipped" && failed.error_code && TOOLING.includes(failed.error_code)) {
        sayMust("EVIDENCE_DEPTH_LIMIT", `Дополнительная проверка «${s.purpose}» не выполнена`);
        nextMust(RETRY);
      }
      continue;
    }
    if (failed.status === "ambiguous") {
      bindAmbiguous = true;
      const cands = i.bundle.entity_bindings.find((b) => b.status === "ambiguous")?.candidates ?? [];
      const q = String(failed.input.query ?? "");
      // One candidate that fits only loosely is asked about as such, not as "several".
      say(
        "LOW_CONFIDENCE_ENTITY_BINDING",
        cands.length === 1
          ? `«${q}» совпадает с ${cands[0]!.name} неточно`
          : `«${q}» подходит нескольким контрагентам: ${cands.map((c) => c.name).join(", ")}`,
      );
      reasons.add("NEEDS_USER_CONFIRMATION");
      clarifying =
        cands.length === 1
          ? `Вы имеете в виду ${cands[0]!.name}?`
          : `Кого вы имеете в виду: ${cands.map((c) => c.name).join(" или ")}?`;
    } else if (failed.tool_name === "resolve_period_or_asof" && failed.status === "no_match") {
      dateRejected = true;
      const o = failed.output as { problem?: string | null; note?: string; working_date?: string } | null;
      const working = o?.working_date ? ruDate(o.working_date) : null;
      // Said from the tool's structured answer, not its free-text note (a note never reaches the user).
      const words = String(failed.input.text ?? "").trim();
      const note =
        o?.problem === "impossible_date"
          ? `Даты${words ? ` «${words}»` : ""} нет в календаре.`
          : o?.problem === "future_date"
            ? `Дата${words ? ` «${words}»` : ""} позже рабочей даты базы${working ? ` ${working}` : ""}: учёт на неё ещё не ведётся.`
            : `В словах${words ? ` «${words}»` : ""} не удалось распознать дату.`;
      if (o?.problem === "impossible_date") {
        say("INVALID_DATE", note);
        clarifying = `${note} На какую дату проверить?`;
      } else if (o?.problem === "future_date") {
        say("FUTURE_DATE", note);
        clarifying = `Учёт ведётся по ${working ?? "рабочую дату базы"} включительно. Проверить на ${working ?? "рабочую дату"} или на другую прошедшую дату?`;
      } else {
        say("MISSING_AS_OF_DATE", note);
        clarifying = "Не удалось прочитать дату. Назовите её, например «на 31.03.2026».";
      }
      reasons.delete("ASSUMPTION_APPLIED_EXPLICITLY");
      reasons.add("NEEDS_USER_CONFIRMATION");
      uncovered.push("Дата отсечения не определена — без неё остатки не посчитать");
      next.push("Назвать существующую прошедшую дату отсечения");
    } else if (
      failed.status === "no_match" &&
      failed.tool_name === "resolve_counterparty" &&
      ((failed.output as { candidates?: unknown[] } | null)?.candidates?.length ?? 0) > 0
    ) {
      bindMissing = true;
      const o = failed.output as {
        note: string;
        candidates: { counterparty_id: string; name: string; roles: string[] }[];
      };
      const ROLE_RU: Record<string, string> = { supplier: "поставщик", customer: "покупатель" };
      say(
        "ENTITY_ROLE_MISMATCH",
        `${o.candidates.map((c) => `${displayName(c.name, c.counterparty_id).text} числится в учёте как ${c.roles.map((r) => ROLE_RU[r] ?? r).join(" и ") || "контрагент без роли"}`).join("; ")}, но не как поставщик`,
      );
      next.push("Спросить о контрагенте-поставщике или уточнить, о чьих расчётах речь");
    } else if (routeMismatch && failed.status === "no_match") {
      // the register has nothing for this role: already reported as outside the route
    } else if (failed.status === "no_match" && failed.tool_name === "resolve_counterparty") {
      bindMissing = true;
      say(
        "ENTITY_NOT_RESOLVED",
        `Контрагент «${String(failed.input.query ?? "")}» не найден в справочнике контрагентов`,
      );
      reasons.add("NO_MATCH_IN_1C");
      next.push("Проверить название или указать ИНН контрагента");
    } else if (failed.status === "unbound_entity") {
      bindMissing = true;
      say("ENTITY_NOT_RESOLVED", `«${s.purpose}»: контрагента с таким идентификатором нет в базе`);
    } else if (failed.status === "no_match") {
      dataMissing = true;
      say("NO_MATCH_IN_1C", `«${s.purpose}»: в учётных данных нет записей${callScope(failed.input)}`);
      const from = i.bundle.facts.find((f) => f.type === "as_of_date")?.details.data_available_from;
      next.push(
        from
          ? `Выбрать дату не раньше ${ruDate(String(from))} — с неё ведутся данные`
          : "Проверить период: данных за него нет",
      );
    } else if (failed.status === "skipped" && !failed.error_code) {
      // follows an upstream data gap that is already reported
    } else {
      toolingBlocked = true;
      // The step's own failure sentence (above) already says it; a bare "not done" would repeat it.
      if (!(
        failed.error_code &&
        TOOLING.includes(failed.error_code) &&
        failed.error_code !== "ROUTE_EXECUTION_ABORTED"
      )) {
        uncovered.push(`Обязательный шаг «${s.purpose}» не выполнен`);
        must.not_established.push(`Обязательный шаг «${s.purpose}» не выполнен`);
      }
      nextMust(RETRY);
    }
  }

  if (aborted.length)
    sayMust(
      "ROUTE_EXECUTION_ABORTED",
      `Не выполнены из-за сбоя на предыдущем шаге: ${aborted.map((a) => `«${a}»`).join(", ")}`,
    );

  // A name that fits several parties, narrowed only by a role the system inferred, is an
  // assumption with the alternatives named — never a confirmed binding (§6.2.3, §11.3).
  for (const b of narrowedByInferredRole(i.bundle, i.scope)) {
    const others = b.narrowed_by_role.map((c) => c.name).join(", ");
    say(
      "ASSUMPTION_APPLIED_EXPLICITLY",
      `«${b.surface}» привязан к ${b.resolved_to} по роли «${i.scope.role === "customer" ? "покупатель" : "поставщик"}», которую вы не называли; это название подходит и: ${others}`,
    );
    next.push(`Уточнить, о ком речь: ${b.resolved_to} или ${others}`);
  }

  // Evidence: what is found, what contradicts, what is missing.
  const balances = i.bundle.facts.filter((f) => f.type === "open_balance" || f.type === "balance");
  const none = i.bundle.facts.find((f) => f.type === "no_open_balance");
  if (balances.length)
    covered.push(
      `Найдены остатки по ${new Set(balances.map((f) => f.entity_id)).size} контрагент(ам) на общую сумму ${money(balances.reduce((s, f) => s + (f.value as number), 0))}`,
    );
  // An empty result is stated for the filter it was queried under (§12.3), never broader.
  if (none)
    covered.push(
      `${none.details.overdue_only ? "Просроченных остатков" : "Ненулевых остатков"} нет (просмотрено движений: ${String(none.details.movements_scanned)})`,
    );
  if (i.bundle.facts.some((f) => f.type === "unclosed_document"))
    covered.push("Определены документы, образующие остатки");
  if (i.bundle.facts.some((f) => f.type === "payment")) covered.push("Проверены оплаты и их проведение");
  for (const c of i.bundle.conflicts) {
    say("CONFLICTING_EVIDENCE", `${c.entity}: ${c.description}`);
    uncovered.push(`Остаток по ${c.entity} не подтверждён однозначно`);
    next.push(`Проверить проведение документов по ${c.entity}`);
  }
  for (const g of i.bundle.not_found) {
    if (g.reason_code === "MISSING_SUPPORTING_DOCUMENT" || g.reason_code === "INSUFFICIENT_DOCUMENT_DEPTH") {
      say(g.reason_code, g.what.charAt(0).toUpperCase() + g.what.slice(1));
      next.push("Запросить недостающие документы у контрагента или проверить их ввод");
    }
  }
  // Strings from tool data that were not shown: the answer names the party by its code, and says why.
  for (const f of i.bundle.flagged_strings ?? [])
    say(
      "UNTRUSTED_TOOL_STRING",
      f.reason === "directory_mismatch"
        ? `Название контрагента${f.id ? ` с кодом ${f.id}` : ""} в ответе инструмента расходится со справочником — показано название из справочника`
        : `${f.field.endsWith("name") ? "Название контрагента" : "Значение из данных учёта"}${f.id && /^[\p{L}\d][\p{L}\d_.:-]{0,40}$/u.test(f.id) ? ` (код ${f.id})` : ""} не похоже на ${f.field.endsWith("name") ? "название" : "номер"} и не показано`,
    );
  for (const t of i.bundle.truncated)
    say("EVIDENCE_DEPTH_LIMIT", `Углублённая проверка шага ${t.step_id} выполнена для ${t.done} из ${t.total} случаев`);

  if (dateRejected || bindAmbiguous) return finish("BLOCKED_BY_AMBIGUITY");
  if (bindMissing) return finish("FAILED_TO_BIND_ENTITIES");
  if (toolingBlocked) return finish("BLOCKED_BY_TOOLING");
  if (dataMissing || routeMismatch) return finish("BLOCKED_BY_MISSING_DATA");
  // A relative date read against the working date is stated, not a gap.
  return finish([...reasons].some((r) => r !== "RELATIVE_DATE_RESOLVED") ? "PARTIALLY_ANSWERED" : "FULLY_ANSWERED");
}

// The model critic's closed set of gaps and actions, and how they are merged: critic-kinds.ts.
export { critiqueGround, mergeCritique, renderCritique, type CritiqueGround } from "./critic-kinds";
