// The claim checker (seed 002 rule №5, §15.3): every substantive statement of an answer is bound
// to the EvidenceBundle and must agree with the CoverageReport. Each sentence is parsed into
// claims — counterparties, amounts, counts, dates, citations, conclusions — and each claim is
// bound to facts; what cannot be bound is an issue. The rules are general (a party exists or not,
// an amount belongs to the party it is written next to or not, a "nothing is owed" conclusion is
// allowed by the outcome class or not); no sentence is matched as a whole. Pure: no model, no SQL.
import type { AnswerChecker } from "../../driver/validated-stream";
import { splitSentences } from "../../driver/validated-stream";
import type { CoverageReport, EvidenceBundle, Fact, FinalAnswerPackage, QueryFrame } from "./artifacts";
import { BLOCK_TITLES } from "./compose";
import { reasonInfo, type OutcomeClass } from "./reason-codes";

export interface ClaimCheckInput {
  bundle: EvidenceBundle;
  coverage: CoverageReport;
  outcome: OutcomeClass;
  frame: QueryFrame | null;
  /** The package composed from the evidence: its amounts and dates are bound like facts. */
  draft: FinalAnswerPackage;
}

// ---------------------------------------------------------------- names

const LEGAL_FORMS = ["ооо", "оао", "зао", "пао", "ао", "ип", "нко", "тоо"];
const tokens = (s: string) =>
  [
    ...s
      .toLowerCase()
      .replace(/ё/g, "е")
      .matchAll(/[\p{L}\d]+/gu),
  ].map((m) => ({ t: m[0], at: m.index! }));

/** «ООО «Альфа-Снаб»» → ["альфа", "снаб"]: the distinctive first word of the name, by its hyphen parts. */
export function nameKey(name: string): string[] {
  const words = name
    .toLowerCase()
    .replace(/ё/g, "е")
    .replace(/[«»"“”„'`]/g, " ")
    .split(/\s+/)
    .filter((w) => w && !LEGAL_FORMS.includes(w));
  return (words[0] ?? "")
    .split("-")
    .map((p) => p.replace(/[^\p{L}\d]/gu, ""))
    .filter(Boolean);
}

// A declined form keeps the stem: «Альфа-Снабу», «ТехноПоставкой», «Вектора».
const stem = (w: string) => (w.length <= 4 ? w : w.slice(0, Math.max(4, w.length - 2)));
const wordMatches = (token: string, part: string) => token.startsWith(stem(part)) && token.length <= part.length + 3;

/** Positions in `text` where the name with this key is written (any case, quotes, legal form, declension). */
function findName(text: string, key: string[]): number[] {
  if (!key.length) return [];
  const ts = tokens(text);
  const at: number[] = [];
  for (let i = 0; i + key.length <= ts.length; i++)
    if (key.every((p, k) => wordMatches(ts[i + k]!.t, p))) at.push(ts[i]!.at);
  return at;
}

interface Party {
  id: string;
  name: string;
  /** The name's key and the keys of the words the user bound to it («Техно» → АО «ТехноПоставка»). */
  keys: string[][];
  /** Roles the catalog gives; empty when unknown. */
  roles: Set<string>;
  /** The supplier-settlements tools returned rows for it (balances, receipts, payments). */
  supplierFacts: boolean;
  facts: Fact[];
  /** Every amount the evidence binds to this party (fact values, their details, their sums). */
  amounts: number[];
}

// Organisation names written with a legal form, or in quotes after a role noun.
const ORG =
  /(?<![\p{L}])(?:ООО|ОАО|ЗАО|ПАО|АО|ИП|НКО|ТОО)\s+(?:«[^»]{1,60}»|"[^"]{1,60}"|“[^”]{1,60}”|\p{Lu}[\p{L}-]*(?:\s+\p{Lu}[\p{L}-]*){0,2})/gu;
const ROLE_QUOTED =
  /(?:поставщик|контрагент|покупател|клиент|организаци|компани|кредитор|дебитор)\p{L}*\s+(«[^»]{1,60}»|"[^"]{1,60}")/giu;
// «Бета-Сервис» after «у / перед / от / с»: a name in quotes, every word capitalised (not «Расчёты с поставщиками»)
const PREP_QUOTED =
  /(?<![\p{L}])(?:у|перед|от|для|со?)\s+(«\p{Lu}[\p{L}\d-]*(?:\s+\p{Lu}[\p{L}\d-]*){0,2}»|"\p{Lu}[\p{L}\d-]*(?:\s+\p{Lu}[\p{L}\d-]*){0,2}")/gu;
const NOT_A_PARTY =
  /поступлен|реализац|расч[её]т|регистр|сч[её]т|плат[её]ж|оплат|акт|договор|накладн|хвост|сальдо|справочник/i;

// ---------------------------------------------------------------- numbers

export interface Amount {
  value: number;
  /** How far the written figure may be from the fact (rounded «950 тыс.», «1,2 млн»). */
  tolerance: number;
  at: number;
  surface: string;
}

const MONTHS = [
  "январ",
  "феврал",
  "март",
  "апрел",
  "ма",
  "июн",
  "июл",
  "август",
  "сентябр",
  "октябр",
  "ноябр",
  "декабр",
];
const MONTH_RE =
  "(январ[ья]|феврал[ья]|марта?|апрел[ья]|ма[яй]|июн[ья]|июл[ья]|августа?|сентябр[ья]|октябр[ья]|ноябр[ья]|декабр[ья])";
const pad = (n: number) => String(n).padStart(2, "0");

/** Dates written in the text as ISO strings; the spans they cover are blanked for the amount parser. */
export function parseDates(text: string): { iso: string; at: number; len: number; yearOnly: boolean }[] {
  const out: { iso: string; at: number; len: number; yearOnly: boolean }[] = [];
  for (const m of text.matchAll(/(?<!\d)(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})(?!\d)(?:\s*(?:г\.|года?|году))?/g)) {
    const y = m[3]!.length === 2 ? 2000 + Number(m[3]) : Number(m[3]);
    out.push({
      iso: `${y}-${pad(Number(m[2]))}-${pad(Number(m[1]))}`,
      at: m.index!,
      len: m[0].length,
      yearOnly: false,
    });
  }
  for (const m of text.matchAll(/(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)/g))
    out.push({ iso: m[0], at: m.index!, len: m[0].length, yearOnly: false });
  for (const m of text.matchAll(
    new RegExp(`(?<!\\d)(\\d{1,2})\\s+${MONTH_RE}(?:\\s+(\\d{4}))?(?:\\s*(?:г\\.|года?|году))?`, "giu"),
  )) {
    const mi = MONTHS.findIndex((p) => m[2]!.toLowerCase().startsWith(p));
    out.push({
      iso: `${m[3] ?? "????"}-${pad(mi + 1)}-${pad(Number(m[1]))}`,
      at: m.index!,
      len: m[0].length,
      yearOnly: false,
    });
  }
  // A bare year counts as a year only when it says so («2026 г.», «в 2026 году»).
  for (const m of text.matchAll(/(?<![\d.])(\d{4})\s*(?:г\.|г(?![\p{L}])|год\p{L}*)/gu)) {
    if (!out.some((d) => m.index! >= d.at && m.index! < d.at + d.len))
      out.push({ iso: m[1]!, at: m.index!, len: m[0].length, yearOnly: true });
  }
  return out;
}

const MULT: [RegExp, number][] = [
  [/^(?:тыс\.?|тысяч\p{L}*)/u, 1e3],
  [/^(?:млн\.?|миллион\p{L}*)/u, 1e6],
  [/^(?:млрд\.?|миллиард\p{L}*)/u, 1e9],
];
const CURRENCY = /^(?:₽|руб\p{L}*\.?|р\.|р(?![\p{L}])|rub)/iu;

/**
 * Amounts in a sentence: figures with a currency or a multiplier, and bare figures of four or more
 * digits (no "year" exemption: a year is a year only inside a date or with «г./год»). Dates,
 * [F#] ids, document and contract numbers («№ 466», «П-12/2025») are not amounts.
 */
export function parseAmounts(text: string): Amount[] {
  let s = text;
  const blank = (at: number, len: number) => (s = s.slice(0, at) + " ".repeat(len) + s.slice(at + len));
  for (const d of parseDates(s)) blank(d.at, d.len);
  for (const m of s.matchAll(
    /\[F\d+\]|№\s*[\p{L}\d/-]+|(?:ИНН|КПП|ОГРН\p{L}*|БИК|р\/с|к\/с)\s*:?\s*\d+|\S*(?:\p{L}[-/]?\d|\d[-/]\p{L}|\d\/\d)\S*/gu,
  )) {
    // a figure glued to a currency sign or a multiplier («150000₽», «950тыс») is still an amount
    if (/^\d[\d\s.,]*(?:₽|тыс|млн|млрд|руб|р(?![\p{L}]))/u.test(m[0])) continue;
    blank(m.index!, m[0].length);
  }
  const out: Amount[] = [];
  for (const m of s.matchAll(
    /(?<![\p{L}\d,.])(\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d{1,3}(?:\.\d{3}){2,}(?!\d)|\d+)(?:[.,](\d+))?/gu,
  )) {
    const int = m[1]!.replace(/[ \u00a0\u202f.]/g, "");
    const frac = m[2] ?? "";
    let value = Number(`${int}.${frac || "0"}`);
    const after = s.slice(m.index! + m[0].length).replace(/^[\s\u00a0]+/, "");
    const mult = MULT.find(([re]) => re.test(after));
    const multText = mult ? after.match(mult[0])![0] : "";
    const rest = after.slice(multText.length).replace(/^[\s\u00a0]+/, "");
    const money = CURRENCY.test(rest) || CURRENCY.test(after);
    let tolerance = 0.005;
    if (mult) {
      value *= mult[1];
      tolerance = mult[1] / 10 ** frac.length / 2;
    }
    if (!mult && !money && int.length < 4) continue; // small bare numbers: counts and ordinals, checked as counts
    out.push({
      value: Math.round(value * 100) / 100,
      tolerance,
      at: m.index!,
      surface: mult ? `${m[0]} ${multText}` : m[0],
    });
  }
  return out;
}

const NUMBER_WORDS: Record<string, number> = {};
for (const [n, forms] of Object.entries({
  1: "один одна одно одного одному одним одном одной",
  2: "два две двух двум двумя двое двоих",
  3: "три трех трем тремя трое троих",
  4: "четыре четырех четырем четырьмя четверо четверых",
  5: "пять пяти пятью пятеро пятерых",
  6: "шесть шести шестью шестеро шестерых",
  7: "семь семи семью семеро семерых",
  8: "восемь восьми восемью",
  9: "девять девяти девятью",
  10: "десять десяти десятью",
}))
  for (const f of forms.split(" ")) NUMBER_WORDS[f] = Number(n);

export type CountNoun = "party" | "document" | "payment";
const NOUNS: [RegExp, CountNoun][] = [
  [/^(?:поставщик|контрагент|кредитор|организаци|компани|юрлиц)/, "party"],
  [/^(?:документ|поступлени|накладн)/, "document"],
  [/^(?:оплат|платеж|платёж)/, "payment"],
];
const nounOf = (w: string) => NOUNS.find(([re]) => re.test(w))?.[1] ?? null;

/** Counts: «7 поставщиков», «три контрагента», «ни одного поставщика», «поставщиками (3)», «оплат: 2». */
export function parseCounts(text: string): { noun: CountNoun; n: number; surface: string }[] {
  const ts = tokens(text);
  const out: { noun: CountNoun; n: number; surface: string }[] = [];
  for (let i = 0; i < ts.length; i++) {
    const w = ts[i]!.t;
    const n = /^\d+$/.test(w) && w.length < 4 ? Number(w) : NUMBER_WORDS[w];
    if (n !== undefined) {
      // «ни одного» is a zero
      const zero = n === 1 && ts[i - 1]?.t === "ни";
      for (const j of [i + 1, i + 2]) {
        const noun = ts[j] && nounOf(ts[j]!.t);
        // only words between the figure and its noun («7 крупных поставщиков»), no punctuation
        if (noun && /^[\s\p{L}-]*$/u.test(text.slice(ts[i]!.at + w.length, ts[j]!.at))) {
          out.push({ noun, n: zero ? 0 : n, surface: text.slice(ts[i]!.at, ts[j]!.at + ts[j]!.t.length) });
          break;
        }
      }
      continue;
    }
    const noun = nounOf(w);
    if (noun) {
      const m = /^\s*(?:\((\d{1,3})\)|:\s*(\d{1,3})(?![\d\s]*\d{3}))/.exec(text.slice(ts[i]!.at + w.length));
      if (m)
        out.push({ noun, n: Number(m[1] ?? m[2]), surface: text.slice(ts[i]!.at, ts[i]!.at + w.length + m[0].length) });
    }
  }
  return out;
}

// ---------------------------------------------------------------- conclusions

/** negative: "nothing is owed / all closed"; rest: "nothing else is owed" (the list is complete); complete: "the answer is full". */
export type Conclusion = "negative" | "rest" | "complete";
// Hedges mark a limitation, not a conclusion («не удалось установить», «это не означает, что долгов нет»).
// A hedge voids the rest of its clause only: «Не удалось установить X; долгов нет» still concludes.
// «Не все расчёты закрыты», «частично» negate what follows them the same way; «нет ни одного
// движения / записей нет» is a gap in the data, not a finding about debts.
const HEDGE =
  /не удалось|не получен|не получилось|неизвестн|нельзя|не можем|не могу|не означает|не установлен|не ответил|нет данных|нет ответа|не подтвержд|нужно уточн|не исключ|недоступ|не\s+вс[её]|не\s+полностью|не\s+до\s+конца|частичн|нет\s+(?:ни\s+)?(?:одного\s+|одной\s+)?(?:движени|запис|данн|сведени)|(?:движени|запис|данн|сведени)\p{L}*\s+(?:\p{L}+\s+)?(?:нет|отсутству)/iu;
// What a "nothing is owed" conclusion is about: debts and settlements, not a missing invoice.
const SUBJECT =
  /хвост|долг|задолж|остат|сальдо|расч[её]т|кредитор|незакрыт|неоплач|не оплач|аванс|обязательств|рассчитал|должн|долж[ен]/i;
const ABSENCE =
  /(?<![\p{L}])(?:нет|не найден\p{L}*|не обнаружен\p{L}*|не выявлен\p{L}*|отсутству\p{L}*|ни одного|ничего|никому|не числится|не значится|не имеется|не наблюдается|нету|не висит|не осталось|не должн\p{L}*|не долж[ен]\p{L}*|закрыт\p{L}*|погашен\p{L}*|исполнен\p{L}*|урегулирован\p{L}*|рассчитал\p{L}*|нулев\p{L}*|чист\p{L}*)(?![\p{L}])/iu;
const COMPLETE =
  /(?<![\p{L}])(?<!(?:не|ни)\s+)(?:полн\p{L}*|полностью|исчерпывающ\p{L}*|окончательн\p{L}*|все данные|всё проверено|все проверено|пробелов\s+(?:нет|не)|без пробелов|ограничений\s+нет|без ограничений|в полном объ[её]ме|данных достаточно)(?![\p{L}])/iu;
// «все счета поставщиков оплачены», «всё закрыто»: a closure said of everything, whatever the noun
const CLOSURE =
  /(?<![\p{L}])вс[её]\s+(?:\p{L}+\s+){0,3}(?:оплачен|закрыт|погашен|урегулирован|рассчитан|исполнен)\p{L}*/iu;
// «по остальным поставщикам хвостов нет»: a claim that the list is complete
const REST = /(?<![\p{L}])(?:остальн\p{L}*|други\p{L}*|прочи\p{L}*|больше|кроме|иных)(?![\p{L}])/iu;
// «не закрыт», «незакрытые» say the opposite of closed
const NOT_CLOSED = /(?<![\p{L}])(?:не\s+закрыт|незакрыт|не\s+погашен|непогашен)/iu;

/** The conclusions a sentence draws: "nothing is owed / all closed" and "the answer is complete". */
export function conclusionsOf(sentence: string): Conclusion[] {
  const out = new Set<Conclusion>();
  for (const raw of sentence.split(/[;!?]|\.(?:\s|$)|\s[—–-]\s/)) {
    const h = HEDGE.exec(raw);
    const clause = h ? raw.slice(0, h.index) : raw;
    if (
      (SUBJECT.test(clause) && ABSENCE.test(clause.replace(new RegExp(NOT_CLOSED.source, "giu"), " "))) ||
      CLOSURE.test(clause)
    )
      out.add(REST.test(clause) ? "rest" : "negative");
    if (COMPLETE.test(clause)) out.add("complete");
  }
  return [...out];
}

// ---------------------------------------------------------------- evidence index

interface Index {
  parties: Party[];
  factIds: Set<string>;
  factById: Map<string, Fact>;
  /** Amounts that need no party: every fact value and every figure of the composed draft. */
  anyAmount: number[];
  aggregates: number[];
  dates: Set<string>;
  years: Set<string>;
  counts: Record<CountNoun, Set<number>>;
  negative: { general: string | null; rest: string | null; partyOk: (p: Party) => boolean };
  complete: string | null;
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? Math.abs(v) : null);
const sum = (xs: number[]) => Math.round(xs.reduce((s, x) => s + x, 0) * 100) / 100;

function partyOfFact(f: Fact, docs: Map<string, string>): string | null {
  if (f.type === "closing_document" || f.type === "document_movement")
    return (f.entity_id && docs.get(f.entity_id)) ?? null;
  if (f.type === "as_of_date" || f.type === "no_open_balance") return null;
  return f.entity_id ?? f.entity;
}

function factAmounts(f: Fact): number[] {
  const out: number[] = [];
  const v = num(f.value);
  if (v !== null && f.type !== "entity_binding" && f.type !== "as_of_date") out.push(v);
  for (const k of ["amount", "paid", "overdue_amount"]) {
    const d = num(f.details[k]);
    if (d !== null) out.push(d);
  }
  for (const x of [
    ...((f.details.allocations as { amount?: number }[]) ?? []),
    ...((f.details.by_contract as { balance?: number; amount?: number }[]) ?? []),
  ] as { amount?: number; balance?: number }[]) {
    const d = num(x?.amount ?? x?.balance);
    if (d !== null) out.push(d);
  }
  return out;
}

const ISO_IN = /\d{4}-\d{2}-\d{2}/g;

function buildIndex(i: ClaimCheckInput): Index {
  const { bundle: b, coverage: c, draft } = i;
  const docs = new Map<string, string>(b.documents.map((d) => [String(d.document_id), String(d.counterparty_id)]));
  const byId = new Map<string, Party>();
  const party = (id: string, name: string) => {
    let p = byId.get(id);
    if (!p)
      byId.set(
        id,
        (p = { id, name, keys: [nameKey(name)], roles: new Set(), supplierFacts: false, facts: [], amounts: [] }),
      );
    return p;
  };
  for (const f of b.facts) {
    const id = partyOfFact(f, docs);
    if (!id) continue;
    const p = party(
      id,
      f.type === "closing_document" || f.type === "document_movement" ? (byId.get(id)?.name ?? id) : f.entity,
    );
    p.facts.push(f);
    if (f.type === "entity_binding") for (const r of (f.details.roles as string[]) ?? []) p.roles.add(r);
    else p.supplierFacts = true; // every data tool of the contract reads the supplier side
    p.amounts.push(...factAmounts(f));
  }
  for (const e of b.entity_bindings) {
    for (const cand of e.candidates) party(cand.id, cand.name);
    // The user's own word may be written back: bound, it names that party; unbound, a party the
    // evidence holds nothing for (a sentence may say so, but no figure or conclusion binds to it).
    const p =
      e.entity_id && e.resolved_to ? party(e.entity_id, e.resolved_to) : party(`surface:${e.surface}`, e.surface);
    const k = nameKey(e.surface);
    if (k.length && !p.keys.some((x) => x.join("-") === k.join("-"))) p.keys.push(k);
  }
  for (const k of b.conflicts) if (k.entity_id) party(k.entity_id, k.entity);
  const parties = [...byId.values()];
  // Sums a person would write: a party's total balance, unpaid, paid.
  for (const p of parties) {
    for (const types of [["open_balance", "balance"], ["unclosed_document"], ["payment"]]) {
      const vs = p.facts.filter((f) => types.includes(f.type)).map((f) => f.value as number);
      if (vs.length) p.amounts.push(Math.abs(sum(vs)));
    }
    const overdue = p.facts.map((f) => num(f.details.overdue_amount)).filter((x): x is number => x !== null);
    if (overdue.length) p.amounts.push(sum(overdue));
  }
  const anyAmount = b.facts.flatMap(factAmounts);
  // Totals over several parties: usable where the text carries no party.
  const aggregates: number[] = [];
  for (const types of [["open_balance", "balance"], ["unclosed_document"], ["payment"]]) {
    const vs = b.facts.filter((f) => types.includes(f.type)).map((f) => f.value as number);
    if (vs.length) aggregates.push(Math.abs(sum(vs)), sum(vs.filter((v) => v > 0)));
  }
  const overdueAll = b.facts.map((f) => num(f.details.overdue_amount)).filter((x): x is number => x !== null && x > 0);
  if (overdueAll.length) aggregates.push(sum(overdueAll));
  anyAmount.push(...aggregates);
  // The composed draft's figures (conflict differences, totals) are built from the facts: a figure
  // written next to a party there (or after it in the same paragraph) is that party's, every
  // figure is usable without a party.
  for (const { party: p, amounts } of paragraphAmounts(draft.user_facing_answer, parties)) {
    anyAmount.push(...amounts.map((a) => a.value));
    if (p) p.amounts.push(...amounts.map((a) => a.value));
    else aggregates.push(...amounts.map((a) => a.value));
  }

  const dates = new Set<string>();
  const addDates = (s: string) => {
    for (const d of s.match(ISO_IN) ?? []) dates.add(d);
  };
  addDates(JSON.stringify(b.facts));
  addDates(JSON.stringify(b.documents));
  addDates(JSON.stringify(b.source_refs));
  if (i.frame) addDates(JSON.stringify(i.frame.time_scope));
  for (const d of parseDates(draft.user_facing_answer)) if (!d.yearOnly) dates.add(d.iso);
  const years = new Set([...dates].map((d) => d.slice(0, 4)));

  const positive = parties.filter(
    (p) =>
      sum(p.facts.filter((f) => f.type === "open_balance" || f.type === "balance").map((f) => f.value as number)) > 0,
  ).length;
  const negativeBal = parties.filter(
    (p) =>
      sum(p.facts.filter((f) => f.type === "open_balance" || f.type === "balance").map((f) => f.value as number)) < 0,
  ).length;
  const withBalance = parties.filter((p) =>
    p.facts.some((f) => f.type === "open_balance" || f.type === "balance"),
  ).length;
  const withDocs = parties.filter((p) => p.facts.some((f) => f.type === "unclosed_document")).length;
  const unclosed = b.facts.filter((f) => f.type === "unclosed_document");
  const payments = b.facts.filter((f) => f.type === "payment");
  const counts: Index["counts"] = {
    party: new Set([positive, negativeBal, withBalance, withDocs]),
    document: new Set([unclosed.length, unclosed.filter((f) => !f.details.posted).length, b.documents.length]),
    payment: new Set([payments.length, payments.filter((f) => f.details.posted === false).length]),
  };
  // With no rows the only count the evidence carries is zero — and a zero is a negative conclusion.
  if (!b.facts.some((f) => f.type === "open_balance" || f.type === "balance")) counts.party.delete(0);

  // Why a conclusion is not allowed (null: allowed). Built from the outcome class and the reason
  // codes' areas: a tooling failure, a truncated or conflicting evidence base, a partial coverage.
  const failedTools = b.execution_errors.map((e) => `${e.tool}: ${reasonInfo[e.reason_code].ru}`);
  const tooling = c.reason_codes.filter((r) => reasonInfo[r].area === "tooling");
  const blockedBy = (): string | null => {
    if (failedTools.length) return `инструмент не отработал (${failedTools[0]})`;
    if (tooling.length) return `ошибка выполнения (${tooling.join(", ")})`;
    if (i.outcome !== "FULLY_ANSWERED") return `исход ${i.outcome}`;
    return null;
  };
  const openRows = b.facts.filter((f) => f.type === "open_balance" || f.type === "balance");
  const emptyFinding =
    b.facts.some((f) => f.type === "no_open_balance") ||
    (unclosed.length === 0 && c.covered_points.length > 0 && b.not_found.length === 0);
  const generalNegative =
    blockedBy() ??
    (openRows.some((f) => (f.value as number) > 0) || unclosed.length
      ? "в данных есть незакрытые остатки"
      : emptyFinding
        ? null
        : "нет успешной проверки с пустым результатом");
  const completeWhy =
    blockedBy() ??
    (c.answerability !== "full"
      ? `ответ ${c.answerability === "partial" ? "частичный" : "недостаточный"}`
      : b.truncated.length
        ? "проверка выполнена не для всех случаев"
        : b.conflicts.length
          ? "в данных есть расхождения"
          : null);
  const settlementsRan = openRows.length > 0 || b.facts.some((f) => f.type === "no_open_balance");
  return {
    parties,
    factIds: new Set(b.facts.map((f) => f.fact_id)),
    factById: new Map(b.facts.map((f) => [f.fact_id, f])),
    anyAmount,
    aggregates,
    dates,
    years,
    counts,
    negative: {
      general: generalNegative,
      rest: blockedBy() ?? (settlementsRan ? null : "остатки регистра не получены"),
      // A party-bound «долга нет»: its balance is zero, or the register was read and has no row for it.
      partyOk: (p) =>
        !p.id.startsWith("surface:") &&
        !failedTools.length &&
        !tooling.length &&
        ["FULLY_ANSWERED", "PARTIALLY_ANSWERED"].includes(i.outcome) &&
        (() => {
          const bal = p.facts.filter((f) => f.type === "open_balance" || f.type === "balance");
          return bal.length
            ? Math.abs(sum(bal.map((f) => f.value as number))) < 0.01 &&
                !p.facts.some((f) => f.type === "unclosed_document")
            : settlementsRan;
        })(),
    },
    complete: completeWhy,
  };
}

interface Mention {
  party: Party;
  at: number;
}
function mentions(sentence: string, parties: Party[]): Mention[] {
  const out: Mention[] = [];
  const len = new Map<Mention, number>();
  for (const p of parties)
    for (const k of p.keys)
      for (const at of findName(sentence, k))
        if (!out.some((o) => o.party === p && o.at === at)) {
          const m = { party: p, at };
          out.push(m);
          len.set(m, k.length);
        }
  // «Альфа» inside «Альфа-Снаб» is not a mention of a party keyed «альфа»: keep the longest key at a position
  return out
    .filter((m) => !out.some((o) => o !== m && o.at === m.at && len.get(o)! > len.get(m)!))
    .sort((a, b) => a.at - b.at);
}
const NESTED = /^[ \t]+(?:[-*•]|\d+[.)])\s/;

/**
 * Each sentence's figures with the party they belong to: the nearest one in the sentence, else the
 * last one named earlier in the same paragraph (a claim split over two sentences), else none.
 * `carried`: the party came from an earlier sentence.
 */
function paragraphAmounts(
  text: string,
  parties: Party[],
): { party: Party | null; carried: boolean; amounts: Amount[]; sentence: string }[] {
  const out: { party: Party | null; carried: boolean; amounts: Amount[]; sentence: string }[] = [];
  let parent: Party | null = null;
  for (const line of text.split("\n")) {
    // a nested list item («  - не оплачено: …») belongs to the party of the line above it
    const nested = NESTED.test(line);
    let last: Party | null = nested ? parent : null;
    for (const raw of splitSentences(line + "\n").complete) {
      const s = raw.replace(/\*\*/g, "");
      const ms = mentions(s, parties);
      const byParty = new Map<Party | null, Amount[]>();
      for (const a of parseAmounts(s)) {
        const p = nearest(ms, a.at) ?? last;
        byParty.set(p, [...(byParty.get(p) ?? []), a]);
      }
      for (const [p, amounts] of byParty)
        out.push({ party: p, carried: !ms.length && p !== null, amounts, sentence: s });
      last = ms.at(-1)?.party ?? last;
    }
    if (!nested && line.trim()) parent = last;
  }
  return out;
}

/** The party a figure belongs to: the nearest one written before it, else the first after it. */
function nearest(ms: Mention[], at: number): Party | null {
  const before = ms.filter((m) => m.at <= at);
  return before.at(-1)?.party ?? ms.find((m) => m.at > at)?.party ?? null;
}

// ---------------------------------------------------------------- one sentence

const SUPPLIER_DEBT = /поставщик|долг|задолж|кредитор|должн|хвост|не оплачен|неоплачен|остат/i;
const close = (a: Amount, v: number) => Math.abs(a.value - v) <= a.tolerance;
const rub = (n: number) => `${n.toLocaleString("ru-RU", { maximumFractionDigits: 2 }).replace(/\u00a0/g, " ")} ₽`;

/** `carried`: the party named last in the paragraph so far (sentences come in order). */
function checkSentence(raw: string, ix: Index, carried: Party | null = null): string[] {
  const s = raw.replace(/\*\*/g, "");
  const issues: string[] = [];
  const ms = mentions(s, ix.parties);
  const named = new Set(ms.map((m) => m.party));

  // Counterparties: every organisation written in the sentence is one the evidence knows.
  for (const re of [ORG, ROLE_QUOTED, PREP_QUOTED]) {
    for (const m of s.matchAll(re)) {
      const text = m[1] ?? m[0];
      if (re === PREP_QUOTED && NOT_A_PARTY.test(text)) continue;
      if (!ix.parties.some((p) => p.keys.some((k) => findName(text, k).length)))
        issues.push(`контрагент ${m[0].trim()} отсутствует в данных проверки`);
    }
  }
  // Roles: a customer-only party is not presented as a supplier debt.
  if (SUPPLIER_DEBT.test(s)) {
    for (const p of named)
      if (p.roles.size && !p.roles.has("supplier") && !p.supplierFacts)
        issues.push(`${p.name} — покупатель, а не поставщик: долга перед ним в данных нет`);
  }
  // Amounts: each belongs to the party written next to it, or (no party) to the evidence at all.
  for (const a of parseAmounts(s)) {
    const p = nearest(ms, a.at);
    if (p) {
      if (!p.amounts.some((v) => close(a, v)))
        issues.push(`сумма ${rub(a.value)} не относится к ${p.name} по данным проверки`);
    } else if (!ix.anyAmount.some((v) => close(a, v))) issues.push(`сумма ${rub(a.value)} не подтверждена фактами`);
    else if (carried && !carried.amounts.some((v) => close(a, v)) && !ix.aggregates.some((v) => close(a, v)))
      issues.push(`сумма ${rub(a.value)} после упоминания ${carried.name} к нему не относится`);
  }
  // Dates and years: the frame's period or a fact's date.
  for (const d of parseDates(s)) {
    if (
      d.yearOnly
        ? !ix.years.has(d.iso)
        : d.iso.startsWith("????")
          ? ![...ix.dates].some((x) => x.endsWith(d.iso.slice(4)))
          : !ix.dates.has(d.iso)
    ) {
      issues.push(
        `${d.yearOnly ? "год" : "дата"} «${s.slice(d.at, d.at + d.len).trim()}» не подтверждена данными проверки`,
      );
    }
  }
  // Counts: equal to the number of matching distinct items in the bundle.
  for (const c of parseCounts(s)) {
    if (c.n === 0) continue; // a zero is a negative conclusion, judged below
    if (!ix.counts[c.noun].has(c.n))
      issues.push(
        `«${c.surface}»: в данных проверки ${[...ix.counts[c.noun]].filter((x) => x > 0).join(" или ") || "0"}`,
      );
  }
  // Citations: the fact exists and supports the sentence's party and figure.
  const cited = [...s.matchAll(/\[(F\d+)\]/g)].map((m) => m[1]!);
  for (const id of cited) {
    const f = ix.factById.get(id);
    if (!f) {
      issues.push(`ссылка на несуществующий факт ${id}`);
      continue;
    }
    const owner = ix.parties.find((p) => p.facts.includes(f));
    if (owner && named.size && !named.has(owner))
      issues.push(`факт ${id} относится к ${owner.name}, а не к ${[...named].map((p) => p.name).join(", ")}`);
  }
  // No party written: the figures must be those of the cited facts (their parties' amounts or their sum).
  if (!named.size) {
    const facts = cited.map((id) => ix.factById.get(id)).filter((f): f is Fact => !!f);
    const owners = ix.parties.filter((p) => facts.some((f) => p.facts.includes(f)));
    if (owners.length) {
      const ok = [
        ...owners.flatMap((p) => p.amounts),
        ...facts.flatMap(factAmounts),
        Math.abs(sum(facts.map((f) => (typeof f.value === "number" ? f.value : 0)))),
      ];
      for (const a of parseAmounts(s))
        if (!ok.some((v) => close(a, v))) issues.push(`сумма ${rub(a.value)} не следует из фактов ${cited.join(", ")}`);
    }
  }
  // Conclusions: no stronger than the outcome class and the coverage allow.
  for (const c of conclusionsOf(s)) {
    if (c === "complete" && ix.complete) issues.push(`вывод о полноте ответа не допускается: ${ix.complete}`);
    if (c === "rest" && ix.negative.rest) issues.push(`вывод «по остальным нет» не допускается: ${ix.negative.rest}`);
    if (c === "negative") {
      const zero = parseCounts(s).some((x) => x.n === 0);
      const bound = [...named];
      if (bound.length && !zero) {
        for (const p of bound)
          if (!ix.negative.partyOk(p)) issues.push(`вывод «нет/закрыто» по ${p.name} не подтверждён данными`);
      } else if (ix.negative.general) issues.push(`вывод «нет/закрыто» не допускается: ${ix.negative.general}`);
    }
  }
  return [...new Set(issues)];
}

// ---------------------------------------------------------------- the checker

/**
 * What only the whole text shows: the five blocks of §9.1, and a figure in a sentence that names no
 * party but follows one in the same paragraph («ООО «А». Долг 150 000 ₽ [F2].»): it is that party's,
 * unless it is a total over several parties.
 */
function checkWhole(text: string, ix: Index, draftText: string): string[] {
  const lower = text.toLowerCase();
  const head = (t: string) => t.toLowerCase().split(" / ")[0]!;
  // The blocks the composed answer has are required; one it leaves out as empty (e.g. «Что
  // проверено» on a misrouted question) is not.
  const draftLower = draftText.toLowerCase();
  const required = BLOCK_TITLES.filter((t) => draftLower.includes(head(t)));
  const issues = required.filter((t) => !lower.includes(head(t))).map((t) => `нет блока «${t}»`);
  for (const x of paragraphAmounts(text, ix.parties)) {
    if (!x.carried || !x.party) continue;
    for (const a of x.amounts)
      if (!x.party.amounts.some((v) => close(a, v)) && !ix.aggregates.some((v) => close(a, v)))
        issues.push(`сумма ${rub(a.value)} после упоминания ${x.party.name} к нему не относится`);
  }
  return [...new Set(issues)];
}

export function createClaimChecker(input: ClaimCheckInput): AnswerChecker {
  const ix = buildIndex(input);
  // A claim may be split over sentences of one paragraph («ООО «А» — крупнейший должник. Его долг
  // 150 000 ₽.»): the party named last carries over until the paragraph ends.
  let carried: Party | null = null;
  let parent: Party | null = null;
  let lineStart = true;
  let nested = false;
  return {
    sentence: (text) => {
      if (lineStart) {
        nested = NESTED.test(text);
        carried = nested ? parent : null;
      }
      const issues = checkSentence(text, ix, carried);
      carried = mentions(text.replace(/\*\*/g, ""), ix.parties).at(-1)?.party ?? carried;
      lineStart = text.includes("\n");
      if (lineStart && !nested) parent = carried;
      return issues;
    },
    whole: (text) => checkWhole(text, ix, input.draft.user_facing_answer),
  };
}

export interface AnswerValidation {
  ok: boolean;
  issues: string[];
  citations: string[];
}

/** The whole text through the checker, sentence by sentence and as a whole (what the stream gate does, at once). */
export function checkAnswer(text: string, checker: AnswerChecker): AnswerValidation {
  const { complete, rest } = splitSentences(text);
  const issues = [...complete, rest].filter((s) => s.trim()).flatMap((s) => checker.sentence(s));
  issues.push(...checker.whole(text));
  const citations = [...new Set([...text.matchAll(/\[(F\d+)\]/g)].map((m) => m[1]!))];
  return { ok: issues.length === 0, issues: [...new Set(issues)], citations };
}
