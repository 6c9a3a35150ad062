// Figures in a Workbench answer bind to the context the model was given (issues 31, 42). A figure of
// the answer must be one the context states — after units are normalised (2 недели = 14 дней,
// 36 часов = 1,5 суток, 15 % = 15 процентов), numbers read in words and dates in any spelling —
// and it must count the same noun there: «14 отчётов» is a lie when the context's 14 is days.
// Derived figures are allowed only where the passed content states the operation: the items a
// passed text enumerates may be counted, and a worked example's arithmetic (a sentence that adds,
// subtracts, multiplies or divides its figures) may be carried out. Ordinals of a numbered list are
// format. The rule is closed: a figure not found is refused, whatever words carry it.
import { figuresIn, type DateParts, type Figure } from "./figures";
import type { ModelRequest } from "./model-request";
import { TYPE_LABELS } from "./lexicon";
import { lemmaOf } from "./morph";
import { contextText } from "./answer-documents";
import { keyGlosses, keyWords, singular } from "./key-gloss";
import { stem } from "./stem";
import { fold, words } from "./text";

/** Nouns that count anything: «3 документа», «5 результатов» agree with any counted noun. */
const GENERIC = new Set(
  "документ элемент позиция результат вариант штука объект запись совпадение пункт item document result match entry".split(
    " ",
  ),
);

/**
 * The figures of a context, as a set of values (what older callers read) that also carries each
 * figure's unit, noun and date — so `validateResponse(…, { numbers: contextNumbers(req) })` checks
 * the whole rule without a new option — and the request itself for the checks that read it.
 */
export class ContextFigures extends Set<number> {
  readonly figures: Figure[];
  #stems?: string;
  /** The context's word stems, computed once (the gate checks every sentence against them). */
  stems(context: string): string {
    return (this.#stems ??= stemsOf(context));
  }
  constructor(
    figures: Figure[],
    readonly request?: ModelRequest,
  ) {
    super();
    this.figures = figures;
    for (const f of figures) {
      this.add(f.value);
      if (f.date?.y) this.add(f.date.y);
      if (f.date?.m) this.add(f.date.m);
    }
  }
}

/** Numbers written in `text` (values only; a date gives its day and year). */
export function numbersIn(text: string): number[] {
  return figuresIn(text).flatMap((f) => (f.date ? [f.date.d, f.date.y].filter((x): x is number => !!x) : [f.value]));
}

const typeNoun = (type: string | null | undefined): string | undefined => {
  const one = type ? TYPE_LABELS[type]?.one : undefined;
  return one ? lemmaOf(one) : undefined;
};

/**
 * Content keys that name their unit: weightKg, approvalDays, timeoutHours, discountPercent. A key
 * without a unit still says what the figure counts («retries: 3» is not three months): a noun of the
 * key's meaning (`keyGlosses`: «3 попытки», «три повтора»), or one its document speaks of — «40
 * точек» for `maxPoints: 40` where the document counts «4 точки» — never «40 транспортных средств».
 * `documentation`: the passed texts, where a key's gloss may be written out.
 */
function keyFigure(key: string, value: number, scope: string, documentation: string): Figure {
  const unit = key.match(/(?:^|[a-z])([A-Z][a-z]+|[a-z]+)$/)?.[1]?.toLowerCase();
  const fromKey = unit ? figuresIn(`${value} ${unit}`)[0] : undefined;
  if (fromKey?.measure) return { ...fromKey, text: `${key}: ${value}` };
  const glosses = keyGlosses(key, documentation);
  return {
    value,
    noun: key.toLowerCase(),
    text: `${key}: ${value}`,
    scope: { text: scope, strict: true },
    key: { words: keyWords(key), glosses },
  };
}

/** Folded word stems of a text, space-padded: whether a text speaks of a noun is a substring test. */
const stemsOf = (text: string) => ` ${words(fold(text)).map(stem).join(" ")} `;
const speaksOf = (stems: string, noun: string) => stems.includes(` ${stem(fold(noun))} `);

const CONJUNCTION = /\s(?:и|или|либо|затем|потом|а также|and|or|then)\s/iu;
/** A comma segment that opens a clause of its own, not an item («которые вызывают композицию»). */
const CLAUSE_OPENER = /^(?:котор|что|чтобы|где|куда|когда|если|поэтому|но|а\s|which|that|where|when|if)/iu;
/** A subordinator that heads the whole enumeration: its segment is the first item («Если A, B или C, …»). */
const HEADING_OPENER = /^(?:если|когда|где|if|when|where)\s/iu;

/**
 * How many items a text enumerates: «бухгалтер, затем финансовый директор» → 2; «одна колонка, две
 * колонки или вкладки» → 3. An enumeration ends with a conjunction before its last item; the items
 * before it are the comma segments back to a colon or to a segment that opens a clause.
 */
export function enumerations(text: string): Figure[] {
  const out: Figure[] = [];
  for (const sentence of text.split(/[.!?;\n]+/)) {
    // a parenthesised list enumerates too: «WORKDAYS(from, to)» takes two dates
    for (const m of sentence.matchAll(/\(([^()]*,[^()]*)\)/g)) {
      const items = m[1]!.split(",").filter((x) => x.trim()).length;
      out.push({
        value: items,
        noun: "item",
        text: `${items} (перечислено)`,
        scope: { text: sentence, strict: false },
      });
    }
    const body = sentence.includes(":") ? sentence.slice(sentence.lastIndexOf(":") + 1) : sentence;
    const segments = body.split(",").map((x) => x.trim());
    for (let k = 0; k < segments.length; k++) {
      const seg = segments[k]!;
      const m = CONJUNCTION.exec(` ${seg} `);
      // «…, затем финансовый директор»: the conjunction opens the segment
      const opens = /^(?:и|или|либо|затем|потом|а также|and|or|then)\s/iu.test(seg);
      if (!m && !opens) continue;
      let items = opens ? 1 : 2;
      for (let j = k - 1; j >= 0 && segments[j]; j--) {
        if (HEADING_OPENER.test(segments[j]!)) {
          items++;
          break;
        }
        if (CLAUSE_OPENER.test(segments[j]!)) break;
        items++;
      }
      // a count of items, never a measure: «три этапа» yes, «три месяца» no
      // the count is of what the sentence speaks of: «три варианта» is no count of «three cases» named elsewhere
      if (items >= 2)
        out.push({
          value: items,
          noun: "item",
          text: `${items} (перечислено)`,
          scope: { text: sentence, strict: false },
        });
      break;
    }
  }
  return out;
}

const OPERATION = /[+×*÷=]|\s[-−–/]\s|плюс|минус|умнож|раздел|делит|сумм|итого|прибав|вычит|разниц|произведен/iu;

/** A worked example's arithmetic: the results of the operation its sentence states, over its figures. */
function derived(text: string): Figure[] {
  const out: Figure[] = [];
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    if (!OPERATION.test(sentence)) continue;
    const fs = figuresIn(sentence).filter((f) => !f.date);
    for (let i = 0; i < fs.length; i++)
      for (let j = i + 1; j < fs.length; j++) {
        const a = fs[i]!;
        const b = fs[j]!;
        const dim = a.measure?.dim ?? b.measure?.dim;
        const sameDim = (a.measure?.dim ?? dim) === (b.measure?.dim ?? dim);
        const base = (f: Figure) => f.measure?.base ?? f.value;
        if (sameDim) {
          for (const v of [base(a) + base(b), Math.abs(base(a) - base(b))])
            out.push(dim ? { value: v, measure: { dim, base: v }, text: `${v}` } : { value: v, text: `${v}` });
        }
        const product = a.value * b.value;
        out.push({ value: product, text: `${product}` });
        if (b.value) out.push({ value: a.value / b.value, text: `${a.value / b.value}` });
        if (a.value) out.push({ value: b.value / a.value, text: `${b.value / a.value}` });
      }
    if (fs.length > 2) {
      const sum = fs.reduce((s, f) => s + (f.measure?.base ?? f.value), 0);
      const dim = fs[0]!.measure?.dim;
      out.push(dim ? { value: sum, measure: { dim, base: sum }, text: `${sum}` } : { value: sum, text: `${sum}` });
    }
  }
  return out;
}

function textFigures(text: string): Figure[] {
  return [...figuresIn(text, { ones: true }), ...enumerations(text), ...derived(text)];
}

/** The figures the model was given: list sizes and totals, figures in passed content, passages, the request. */
export function contextNumbers(req: ModelRequest): ContextFigures {
  const out: Figure[] = [...textFigures(req.request)];
  const documentation = contextText(req);
  const perType = new Map<string | undefined, number>();
  for (const b of req.context) {
    if (b.kind === "list") {
      const noun = typeNoun(b.entityType);
      const counted = (value: number): Figure => ({ value, ...(noun ? { noun } : {}), text: String(value) });
      out.push(counted(b.total), counted(b.items.length));
      if (b.total > b.items.length) out.push(counted(b.total - b.items.length));
      // the shown items grouped by what the prompt shows of them: how many in each folder, of each type
      for (const key of ["folderIdentity", "documentType"] as const) {
        const groups = new Map<string, number>();
        for (const i of b.items) groups.set(String(i[key]), (groups.get(String(i[key])) ?? 0) + 1);
        for (const n of groups.values()) out.push(counted(n));
      }
      for (const i of b.items) out.push(...figuresIn(i.displayName));
      if (b.folder) out.push(...figuresIn(b.folder.displayName));
    } else if (b.kind === "entity") {
      perType.set(b.documentType, (perType.get(b.documentType) ?? 0) + 1);
      out.push(...figuresIn(b.displayName));
      if (b.folder) out.push(...figuresIn(b.folder.displayName));
      const scope = stringsOf(b.content);
      const walk = (v: unknown, key: string): void => {
        if (typeof v === "string") out.push(...textFigures(v));
        else if (typeof v === "number") out.push(keyFigure(key, v, scope, documentation));
        else if (Array.isArray(v)) {
          // a document's own lists may be counted: «Поля: a, b, c» — three fields
          out.push({ value: v.length, noun: key.toLowerCase(), text: `${key}: ${v.length}` });
          v.forEach((x) => walk(x, key));
        } else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k);
      };
      walk(b.content, "content");
    } else out.push(...textFigures(`${b.heading}\n${b.text}`));
  }
  for (const m of req.conversation) out.push(...figuresIn(m.text));
  for (const c of req.clarifications ?? []) out.push(...figuresIn(`${c.question}\n${c.answer}`));
  // how many documents (of each type) the answer may say it was given
  const entities = [...perType.values()].reduce((s, n) => s + n, 0);
  out.push({ value: entities, noun: "документ", text: String(entities) });
  for (const [type, n] of perType) {
    const noun = typeNoun(type);
    out.push({ value: n, ...(noun ? { noun } : {}), text: String(n) });
  }
  return new ContextFigures(out, req);
}

function stringsOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map(stringsOf).join("\n");
  if (v && typeof v === "object") return Object.values(v).map(stringsOf).join("\n");
  return "";
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

function dateSupported(d: DateParts, c: Figure): boolean {
  if (c.date) return (["y", "m", "d"] as const).every((k) => d[k] === undefined || d[k] === c.date![k]);
  // a year alone may stand for a year the context wrote as a plain number
  return d.m === undefined && d.d === undefined && !c.measure && !c.noun && c.value === d.y;
}

/** An English noun as figures.ts keeps it (a final «s» cut: «retries» → «retrie») in its singular: retry. */
const english = (noun: string) => singular(/s$/.test(noun) ? noun : `${noun}s`);

function nounsAgree(a: string, c: Figure, context: string): boolean {
  // a content key's figure about the key's own meaning: its gloss («retries» — «попытка»), or in
  // English the key's own word («3 retries»)
  if (c.key && (c.key.glosses.includes(a) || (/^[a-z]/.test(a) && c.key.words.includes(english(a))))) return true;
  if (c.scope && !/^[a-z]/.test(a)) {
    const scope = stemsOf(c.scope.text);
    // a key counts only what its document speaks of; an enumeration, what its sentence does — or a
    // noun the context never uses (the answer's own word for the items: «в трёх случаях»)
    return speaksOf(scope, a) || (!c.scope.strict && !speaksOf(context, a));
  }
  if (GENERIC.has(a)) return true;
  // a Latin noun («columns» of a content value) and a Cyrillic one cannot be compared without a dictionary
  if (/^[a-z]/.test(a) !== /^[a-z]/.test(c.noun!)) return true;
  return a === c.noun || GENERIC.has(c.noun!);
}

/**
 * Months and days meet as the calendar does — a month is 28–31 days, a year 365–366 — but only as a
 * gloss: «30 дней — примерно месяц» restates a figure the answer also gives exactly; «около трёх
 * месяцев» alone for 90 days is a figure the context does not state.
 */
function calendar(c: Figure, a: Figure): boolean {
  if (!c.measure || !a.measure) return false;
  const [m, t] = c.measure.dim === "months" ? [c, a] : [a, c];
  if (m.measure!.dim !== "months" || t.measure!.dim !== "time") return false;
  const days = t.measure!.base / 1440;
  const months = m.measure!.base;
  return months % 12 === 0
    ? days >= 365 * (months / 12) && days <= 366 * (months / 12)
    : days >= 28 * months && days <= 31 * months;
}

/** Whether context figure `c` states answer figure `a` (`context`: the context's stems). */
function supports(c: Figure, a: Figure, context = ""): boolean {
  if (a.date) return dateSupported(a.date, c);
  if (a.measure) {
    if (c.measure) return c.measure.dim === a.measure.dim && close(c.measure.base, a.measure.base);
    return close(c.value, a.value) && !c.noun && !c.date;
  }
  if (c.date) return !a.noun && (c.date.d === a.value || c.date.y === a.value || c.date.m === a.value);
  if (!close(c.value, a.value)) return false;
  if (!a.noun || !c.noun) return true;
  // the context's figure measures something (days, kg) and the answer counts a thing with it
  if (c.measure) return false;
  return nounsAgree(a.noun, c, context);
}

/**
 * A count the answer backs with its own enumeration of context items: «три функции дат: ADDDAYS,
 * ENDOFMONTH и WORKDAYS» — exactly that many items follow the colon and each one is in the context.
 */
function enumeratedHere(answer: string, f: Figure, context: string): boolean {
  if (!Number.isInteger(f.value) || f.value < 2) return false;
  const at = answer.indexOf(f.text);
  if (at < 0) return false;
  const rest = answer.slice(at + f.text.length);
  const colon = rest.indexOf(":");
  if (colon < 0 || colon > 40 || /[.!?\n]/.test(rest.slice(0, colon))) return false;
  const list = rest.slice(colon + 1).split(/[.!?;\n]/)[0]!;
  const items = list
    .split(/,|\s(?:и|или|and|or)\s/iu)
    // an item's own markup, not its text: «`*`» is the operator *
    .map((x) =>
      x
        .trim()
        .replace(/^`([^`]+)`$|^\*\*(.+)\*\*$/, "$1$2")
        .replace(/^[«"[]+|[»"\]]+$/g, "")
        .trim(),
    )
    .filter(Boolean);
  const folded = fold(context);
  return items.length === f.value && items.every((x) => folded.includes(fold(x)));
}

/** Figures of `answer` the context does not state (or states about another noun). */
export function unsupportedFigures(answer: string, ctx: ContextFigures): Figure[] {
  const context = ctx.request ? contextText(ctx.request) : "";
  const stems = context ? ctx.stems(context) : "";
  const all = figuresIn(answer);
  // the answer's own measures the context states exactly: what a calendar gloss may restate
  const glossed = all.filter((b) => b.measure && ctx.figures.some((c) => supports(c, b, stems)));
  return all.filter((a) => {
    // a noun the context counts binds the figure to those counts: «один уточняющий вопрос» in the
    // context makes «три вопроса» a lie even where some other «три» (an enumeration) stands bare;
    // a content key whose document speaks of the noun counts it too (`maxPoints` and «4 точки»)
    const counted =
      a.noun && !a.measure && !GENERIC.has(a.noun)
        ? ctx.figures.filter(
            (c) => c.noun === a.noun || (c.scope?.strict && !/^[a-z]/.test(a.noun!) && nounsAgree(a.noun!, c, stems)),
          )
        : [];
    const candidates = counted.length ? counted : ctx.figures;
    if (candidates.some((c) => supports(c, a, stems))) return false;
    if (a.measure && glossed.some((b) => calendar(b, a))) return false;
    return !(context && enumeratedHere(answer, a, context));
  });
}

/** Figures of `answer` the context does not hold (values; with a ContextFigures, by the whole rule). */
export function unsupportedNumbers(answer: string, allowed: ReadonlySet<number>): number[] {
  if (allowed instanceof ContextFigures) return [...new Set(unsupportedFigures(answer, allowed).map((f) => f.value))];
  return [...new Set(numbersIn(answer).filter((n) => !allowed.has(n)))];
}
