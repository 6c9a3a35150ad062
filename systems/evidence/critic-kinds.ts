// The model critic proposes from a closed set (§6.2.7): each gap and each next action is a kind
// the engine knows, bound to something of this run — a fact, a plan step, a failed tool, or the
// run's scope (its party, its period). The engine writes every sentence from the kind and the
// thing it is bound to; the critic never writes an amount, a status or any text that is shown.
// Whatever free text a model adds stays in the engineering trace (stage 07), never in the answer.
import type { CoverageReport, EvidenceBundle, ExecutionPlan, Fact, ToolRun } from "./artifacts";
import { ruDate } from "./evidence-builder";
import type { CriticAction, CriticGap, CriticOutput, CriticRef } from "./model-outputs";
import { sortReasons, type ReasonCode } from "./reason-codes";

/** What a critic's point may stand on in this run: its facts, its plan's steps, its failed tool runs, its scope. */
export interface CritiqueGround {
  factIds: string[];
  stepIds: string[];
  failedTools: string[];
  facts: Fact[];
  steps: { step_id: string; purpose: string; tool: string | null }[];
  /** The party the run is about (the counterparty it bound), if any. */
  party: string | null;
  /** The run's as-of date (ISO), if it was resolved. */
  period: string | null;
}

const OKS = new Set(["success", "empty"]);

/** Facts that stand for a party's settlements (a party can be named from them). */
const PARTY_FACTS = new Set<Fact["type"]>([
  "open_balance",
  "balance",
  "due_date",
  "unclosed_document",
  "payment",
  "entity_binding",
]);

/** What each tool checks, in the engine's words (a step's purpose from a model plan is never shown). */
export const TOOL_RU: Record<string, string> = {
  resolve_counterparty: "привязка контрагента к справочнику",
  resolve_period_or_asof: "определение даты отсечения",
  get_open_supplier_settlements: "остатки по регистру расчётов с поставщиками",
  get_unclosed_documents_for_counterparty: "документы поступления и их оплата",
  get_document_movements: "движения документов по регистру",
  get_payment_chain: "оплаты и их распределение",
  get_balance_as_of: "сальдо по регистру расчётов",
  get_related_closing_documents: "подтверждающие документы (счета-фактуры)",
};

export function critiqueGround(bundle: EvidenceBundle, plan: ExecutionPlan | null, runs: ToolRun[]): CritiqueGround {
  const bound = bundle.entity_bindings.find((b) => b.status === "bound");
  const date = bundle.facts.find((f) => f.type === "as_of_date");
  return {
    factIds: bundle.facts.map((f) => f.fact_id),
    stepIds: plan?.steps.map((s) => s.step_id) ?? [],
    failedTools: runs.filter((r) => !OKS.has(r.status) && r.status !== "skipped").map((r) => r.tool_name),
    facts: bundle.facts,
    steps: plan?.steps.map((s) => ({ step_id: s.step_id, purpose: s.purpose, tool: s.tool })) ?? [],
    party: bound?.resolved_to ?? null,
    period: date ? String(date.value) : null,
  };
}

/** What a reference binds to in this run, in words the engine writes; null when it binds to nothing. */
interface Bound {
  /** «по ООО «Альфа-Снаб»», «по проверке «…»», «по периоду до 31.03.2026». */
  subject: string;
  /** The party, when the reference names one. */
  party: string | null;
  step: string | null;
  period: string | null;
}

function bind(ref: CriticRef, g: CritiqueGround): Bound | null {
  const n = [ref.fact_id, ref.step_id, ref.tool, ref.scope].filter((x) => x !== null && x !== undefined).length;
  if (n !== 1) return null; // one thing, named exactly
  if (ref.fact_id) {
    const f = g.facts.find((x) => x.fact_id === ref.fact_id);
    if (!f) return null;
    if (f.type === "as_of_date")
      return { subject: `на ${ruDate(String(f.value))}`, party: null, step: null, period: String(f.value) };
    if (!PARTY_FACTS.has(f.type)) return null;
    const party = f.type === "entity_binding" || f.entity_id ? f.entity : null;
    return party ? { subject: `по ${party}`, party, step: null, period: g.period } : null;
  }
  if (ref.step_id) {
    const s = g.steps.find((x) => x.step_id === ref.step_id);
    return s && s.tool ? { subject: `по проверке «${s.purpose}»`, party: null, step: s.purpose, period: null } : null;
  }
  if (ref.tool) {
    if (!g.failedTools.includes(ref.tool)) return null;
    const s = g.steps.find((x) => x.tool === ref.tool);
    const what = s?.purpose ?? TOOL_RU[ref.tool] ?? ref.tool;
    return { subject: `по проверке «${what}»`, party: null, step: what, period: null };
  }
  if (ref.scope === "party")
    return g.party ? { subject: `по ${g.party}`, party: g.party, step: null, period: g.period } : null;
  if (ref.scope === "period")
    return g.period ? { subject: `за период до ${ruDate(g.period)}`, party: null, step: null, period: g.period } : null;
  return null;
}

const until = (b: Bound) => (b.period && b.party ? ` за период до ${ruDate(b.period)}` : "");

/** Each gap kind: its reason code and the sentence the engine writes for it. Null: the kind does not fit the binding. */
const GAPS: Record<CriticGap["kind"], { code: ReasonCode; text: (b: Bound) => string | null }> = {
  documents_not_checked: {
    code: "INSUFFICIENT_DOCUMENT_DEPTH",
    text: (b) => (b.step ? null : `Документы, образующие остаток, ${b.subject} не проверены`),
  },
  document_to_request: {
    code: "INSUFFICIENT_DOCUMENT_DEPTH",
    text: (b) =>
      b.step ? null : `Подтверждающие документы ${b.subject}${until(b)} в учёте не получены — их нужно запросить`,
  },
  payments_not_reconciled: {
    code: "EVIDENCE_DEPTH_LIMIT",
    text: (b) => (b.step ? null : `Остаток ${b.subject} не сверен с оплатами`),
  },
  step_incomplete: {
    code: "EVIDENCE_DEPTH_LIMIT",
    text: (b) => (b.step ? `Проверка «${b.step}» выполнена не полностью` : null),
  },
  partial_match: {
    code: "PARTIAL_MATCH_IN_1C",
    text: (b) => (b.party ? `Данные ${b.subject} найдены в учёте не полностью` : null),
  },
};

const ACTIONS: Record<CriticAction["kind"], (b: Bound) => string | null> = {
  request_documents: (b) => (b.step ? null : `Запросить подтверждающие документы ${b.subject}${until(b)}`),
  check_posting: (b) => (b.party ? `Проверить проведение документов ${b.subject}` : null),
  retry_step: (b) => (b.step ? `Повторить проверку «${b.step}» позже` : null),
  run_deep_check: (b) =>
    b.step ? `Выполнить проверку «${b.step}» полностью` : `Запустить углублённую проверку документов ${b.subject}`,
  confirm_period: (b) => (b.period && !b.party && !b.step ? `Подтвердить дату отсечения ${ruDate(b.period)}` : null),
  confirm_counterparty: (b) => (b.party ? `Подтвердить, что речь о ${b.party}` : null),
};

export interface RenderedCritique {
  gaps: { reason_code: ReasonCode; message: string }[];
  actions: string[];
  /** Why each dropped point was dropped, by kind and reference — never the model's own words. */
  dropped: string[];
  /** How many free-text items the model added (kept in the trace only). */
  freeText: number;
}

/** A reference named in the trace note: an id-shaped value as it is, anything else (words, amounts) never repeated. */
const refWords = (r: CriticRef) => {
  const v = r.fact_id ?? r.step_id ?? r.tool ?? (r.scope ? `scope:${r.scope}` : null);
  if (v === null) return "без ссылки";
  return /^(?:[FS]\d{1,4}|[a-z_]{3,40}|scope:(?:party|period))$/.test(v) ? v : "ссылка не в форме id";
};

/** The critic's proposals as the engine's sentences; a point that binds to nothing of this run is dropped. */
export function renderCritique(m: CriticOutput, g: CritiqueGround): RenderedCritique {
  const dropped: string[] = [];
  const gaps: RenderedCritique["gaps"] = [];
  for (const x of m.gaps ?? []) {
    const b = bind(x.ref, g);
    const text = b ? GAPS[x.kind].text(b) : null;
    if (!text) dropped.push(`${x.kind} (${refWords(x.ref)})`);
    else if (!gaps.some((y) => y.message === text)) gaps.push({ reason_code: GAPS[x.kind].code, message: text });
  }
  const actions: string[] = [];
  for (const x of m.actions ?? []) {
    const b = bind(x.ref, g);
    const text = b ? ACTIONS[x.kind](b) : null;
    if (!text) dropped.push(`${x.kind} (${refWords(x.ref)})`);
    else if (!actions.includes(text)) actions.push(text);
  }
  const freeText =
    (m.covered_points?.length ?? 0) +
    (m.uncovered_points?.length ?? 0) +
    (m.next_best_actions?.length ?? 0) +
    (m.extra_reasons?.length ?? 0) +
    (m.note ? 1 : 0);
  return { gaps, actions, dropped, freeText };
}

/**
 * Adds the model critic's findings; it can lower a full answer to partial, never raise one, and
 * never removes a gap. Only the closed-set points that bind to this run are taken, as the engine
 * words them; without `ground` (no run to bind to) nothing of the model's is taken.
 */
export function mergeCritique(
  c: CoverageReport,
  raw: CriticOutput | null,
  status: CoverageReport["critic"]["model"],
  note: string | null = null,
  ground?: CritiqueGround,
): CoverageReport {
  if (!raw) return { ...c, critic: { rules: true, model: status, note } };
  const r = ground
    ? renderCritique(raw, ground)
    : { gaps: [], actions: [], dropped: [...(raw.gaps ?? []), ...(raw.actions ?? [])].map((x) => x.kind), freeText: 0 };
  const notes = [note];
  if (r.dropped.length)
    notes.push(`отброшены пункты критика без опоры на факт, шаг, сбой или охват запуска: ${r.dropped.join("; ")}`);
  if (r.freeText) notes.push(`свободный текст критика не показывается (${r.freeText}; в трассе, этап 07)`);
  // A blocked run stays what its rules say: depth gaps lower only an answer that was given.
  const answered = c.outcome === "FULLY_ANSWERED" || c.outcome === "PARTIALLY_ANSWERED";
  const gaps = answered ? r.gaps : [];
  const outcome = c.outcome === "FULLY_ANSWERED" && gaps.length ? "PARTIALLY_ANSWERED" : c.outcome;
  return {
    ...c,
    outcome,
    answerability: outcome === "PARTIALLY_ANSWERED" ? "partial" : c.answerability,
    uncovered_points: [...new Set([...c.uncovered_points, ...gaps.map((x) => x.message)])],
    why_partial: [...c.why_partial, ...gaps.filter((e) => !c.why_partial.some((w) => w.message === e.message))],
    // The rules' actions all stay (faults' retries among them); the critic's fill up to six.
    next_best_actions: [...new Set([...c.next_best_actions, ...r.actions])].slice(
      0,
      Math.max(6, c.next_best_actions.length),
    ),
    reason_codes: sortReasons([...c.reason_codes, ...gaps.map((x) => x.reason_code)]),
    critic: { rules: true, model: status, note: notes.filter(Boolean).join("; ") || null },
  };
}
