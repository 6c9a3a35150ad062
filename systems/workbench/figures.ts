// Figures in text, read the way a person reads them (issue 42): a number in digits or words
// («14», «четырнадцать», «двух»), the unit it measures (days↔weeks, hours↔days, minutes↔hours,
// %, kg, km, roubles — converted to one base per dimension), the noun it counts («3 композиции»),
// and dates in any spelling (2025-03-14, 14.03.2025, «14 марта 2025 года», «в 2025 году»).
// The same reader runs on the context and on the answer, so a figure restated in other units or
// in words meets its source, and one stated about another noun does not.
import { readings } from "./morph";

export interface DateParts {
  y?: number;
  m?: number;
  d?: number;
}

export interface Figure {
  value: number;
  /** The measured quantity in its dimension's base unit (minutes, grams, metres, roubles, percent). */
  measure?: { dim: string; base: number };
  /** The counted noun's dictionary form («композиция», «поле»), when the figure counts one. */
  noun?: string;
  date?: DateParts;
  /** As written, for the issue's detail. */
  text: string;
  /**
   * For a figure whose noun is no Russian word — an enumeration's count of items, a content key's
   * value («maxPoints: 40») — the text it counts in: an answer's noun must be one that text speaks of.
   */
  scope?: { text: string; strict: boolean };
  /** A content key's figure: the key's words and the Russian nouns they mean (key-gloss.ts). */
  key?: { words: string[]; glosses: string[] };
}

/** Units by dictionary form or abbreviation: dimension and factor to its base. */
const UNITS: Record<string, [string, number]> = {
  секунда: ["time", 1 / 60],
  сек: ["time", 1 / 60],
  с: ["time", 1 / 60],
  минута: ["time", 1],
  мин: ["time", 1],
  час: ["time", 60],
  ч: ["time", 60],
  сутки: ["time", 1440],
  день: ["time", 1440],
  дн: ["time", 1440],
  неделя: ["time", 10080],
  нед: ["time", 10080],
  месяц: ["months", 1],
  мес: ["months", 1],
  год: ["months", 12],
  лет: ["months", 12],
  процент: ["percent", 1],
  "%": ["percent", 1],
  грамм: ["mass", 1],
  г: ["mass", 1],
  килограмм: ["mass", 1000],
  кг: ["mass", 1000],
  тонна: ["mass", 1e6],
  т: ["mass", 1e6],
  миллиметр: ["length", 0.001],
  мм: ["length", 0.001],
  сантиметр: ["length", 0.01],
  см: ["length", 0.01],
  метр: ["length", 1],
  м: ["length", 1],
  километр: ["length", 1000],
  км: ["length", 1000],
  рубль: ["money", 1],
  руб: ["money", 1],
  р: ["money", 1],
  "₽": ["money", 1],
  копейка: ["money", 0.01],
  коп: ["money", 0.01],
  // English, for an answer written in English and for content keys (weightKg, approvalDays)
  second: ["time", 1 / 60],
  seconds: ["time", 1 / 60],
  minute: ["time", 1],
  minutes: ["time", 1],
  hour: ["time", 60],
  hours: ["time", 60],
  day: ["time", 1440],
  days: ["time", 1440],
  week: ["time", 10080],
  weeks: ["time", 10080],
  month: ["months", 1],
  months: ["months", 1],
  year: ["months", 12],
  years: ["months", 12],
  percent: ["percent", 1],
  pct: ["percent", 1],
  kg: ["mass", 1000],
  km: ["length", 1000],
  rub: ["money", 1],
};
/** «рабочих дней» are not calendar days: a day qualified so is its own dimension. */
const WORKING = new Set(["рабочий", "working", "business"]);

/** The cardinal numerals (a closed class): dictionary form → value; «тысяча» multiplies. */
const CARDINALS: Record<string, number> = {
  ноль: 0,
  нуль: 0,
  два: 2,
  оба: 2,
  двое: 2,
  три: 3,
  трое: 3,
  четыре: 4,
  четверо: 4,
  пять: 5,
  пятеро: 5,
  шесть: 6,
  шестеро: 6,
  семь: 7,
  семеро: 7,
  восемь: 8,
  девять: 9,
  десять: 10,
  одиннадцать: 11,
  двенадцать: 12,
  тринадцать: 13,
  четырнадцать: 14,
  пятнадцать: 15,
  шестнадцать: 16,
  семнадцать: 17,
  восемнадцать: 18,
  девятнадцать: 19,
  двадцать: 20,
  тридцать: 30,
  сорок: 40,
  пятьдесят: 50,
  шестьдесят: 60,
  семьдесят: 70,
  восемьдесят: 80,
  девяносто: 90,
  сто: 100,
  двести: 200,
  триста: 300,
  четыреста: 400,
  пятьсот: 500,
  шестьсот: 600,
  семьсот: 700,
  восемьсот: 800,
  девятьсот: 900,
  полтора: 1.5,
  // English, for content values («twoColumns») and answers written in English
  zero: 0,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  hundred: 100,
};
const MULTIPLIERS: Record<string, number> = { тысяча: 1000, тыс: 1000, миллион: 1e6, млн: 1e6 };
const MONTHS: Record<string, number> = {
  январь: 1,
  февраль: 2,
  март: 3,
  апрель: 4,
  май: 5,
  июнь: 6,
  июль: 7,
  август: 8,
  сентябрь: 9,
  октябрь: 10,
  ноябрь: 11,
  декабрь: 12,
};

interface Tok {
  kind: "num" | "word" | "sign" | "punct";
  raw: string;
  value?: number;
  lemma?: string;
  pos?: string;
  /** A gent noun reading's dictionary form («полей» → поле): the noun a number after a colon counts. */
  gent?: string;
  /** A genitive plural noun reading's dictionary form: the noun a number after it counts («полей пять»). */
  gentPlur?: string;
  /** The numeral's kind when the word is one: a cardinal or a multiplier. */
  numeral?: "cardinal" | "multiplier";
}

const lower = (s: string) => s.toLowerCase().replace(/ё/g, "е");

function lemmaAndPos(w: string): Pick<Tok, "lemma" | "pos" | "gent" | "numeral"> {
  const rs = readings(w);
  // a numeral by its numeral reading («второй» is an ordinal, not «два»); a unit or a month by any reading («часов»: час, not часы)
  const latin = /^[a-z]+$/i.test(w);
  const numr = latin
    ? CARDINALS[lower(w)] !== undefined
      ? { lemma: lower(w), pos: "NUMR" }
      : undefined
    : rs.find(
        (r) =>
          ((r.pos === "NUMR" || r.lemma === "сто") && CARDINALS[r.lemma] !== undefined) ||
          MULTIPLIERS[r.lemma] !== undefined,
      );
  const other = rs.find((r) => MONTHS[r.lemma] !== undefined || UNITS[r.lemma] !== undefined);
  const best = numr ?? other ?? rs[0];
  const gent = rs.find((r) => r.pos === "NOUN" && r.tags.has("gent"))?.lemma;
  const gentPlur = rs.find((r) => r.pos === "NOUN" && r.tags.has("gent") && r.tags.has("plur"))?.lemma;
  return {
    lemma: best?.lemma ?? lower(w),
    pos: best?.pos ?? "",
    ...(gent ? { gent } : {}),
    ...(gentPlur ? { gentPlur } : {}),
    ...(numr ? { numeral: MULTIPLIERS[numr.lemma] !== undefined ? "multiplier" : "cardinal" } : {}),
  };
}

const TOKEN_RE =
  /\d{1,3}(?:[\u00a0\u202f ]\d{3})+(?:[.,]\d+)?(?![\d])|\d+(?:[.,]\d+)?|[\p{L}]+|[%₽]|[.,;:!?()—–\-|/]/gu;

function tokens(text: string): Tok[] {
  const out: Tok[] = [];
  for (const m of text.matchAll(TOKEN_RE)) {
    const s = m[0];
    if (/^\d/.test(s))
      out.push({ kind: "num", raw: s, value: Number(s.replace(/[\u00a0\u202f ]/g, "").replace(",", ".")) });
    else if (/^\p{L}/u.test(s)) out.push({ kind: "word", raw: s, ...lemmaAndPos(s) });
    else if (s === "%" || s === "₽") out.push({ kind: "sign", raw: s, lemma: s });
    else out.push({ kind: "punct", raw: s });
  }
  return out;
}

const ISO_DATE = /(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])/g;
const DOT_DATE = /(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?!\d|\.\d)/g;

/**
 * The figures of a text. Code, citations and identities are not prose; a numbered list's marker is
 * format. `ones`: read «один/одна» before a noun as 1 — in the context («задаёт один уточняющий
 * вопрос» counts questions), not in an answer, where «одна из», «в одной папке» are idiom.
 */
export function figuresIn(text: string, o: { ones?: boolean } = {}): Figure[] {
  const out: Figure[] = [];
  const prose = text
    .replace(/\[\[[^\]]*\]\]/g, " ")
    .replace(/`[^`]*`/g, " ")
    .replace(/(?<![\p{L}\d])[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+/giu, " ")
    // camelCase values are words too: «twoColumns» is «two columns»
    .replace(/([a-z])([A-Z])/g, "$1 $2");
  for (const rawLine of prose.split("\n")) {
    let line = rawLine
      .replace(/^\s*(?:[-*+>]\s*)*(?:#{1,6}\s*)?(?:\*\*)?\d{1,3}[.)](?:\*\*)?\s/u, " ")
      // a table's first cell holding only a row number is format too
      .replace(/^\s*\|\s*\d{1,2}\s*\|/u, "|");
    line = line.replace(ISO_DATE, (_, y, m, d) => {
      out.push({ value: Number(d), date: { y: Number(y), m: Number(m), d: Number(d) }, text: `${y}-${m}-${d}` });
      return " ; ";
    });
    line = line.replace(DOT_DATE, (s, d, m, y) => {
      out.push({ value: Number(d), date: { y: Number(y), m: Number(m), d: Number(d) }, text: s });
      return " ; ";
    });
    readLine(tokens(line), out, !!o.ones);
  }
  return out;
}

function readLine(ts: Tok[], out: Figure[], ones: boolean): void {
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i]!;
    let value: number | undefined;
    let end = i;
    // «полгода», «полчаса», «полтонны»: half of a unit in one word
    const half = t.kind === "word" ? /^пол(.{3,})$/u.exec(lower(t.raw)) : null;
    const halfUnit = half ? readings(half[1]!).find((r) => UNITS[r.lemma])?.lemma : undefined;
    if (halfUnit) {
      const [dim, factor] = UNITS[halfUnit]!;
      out.push({ value: 0.5, measure: { dim, base: 0.5 * factor }, noun: halfUnit, text: t.raw });
      continue;
    }
    // a unit with no number is one of it: «после года работы», «раз в сутки», «through a week»
    const unit = t.kind === "word" ? UNITS[t.lemma!] : undefined;
    const prev = ts[i - 1];
    if (
      unit &&
      // a word, not an abbreviation («в 5 мин», «т», «с»)
      (t.raw.length >= 4 || lower(t.raw) === "год") &&
      prev?.kind === "word" &&
      oneUnitBefore(ts, i) &&
      readings(t.raw).some((r) => r.lemma === t.lemma && (r.tags.has("sing") || r.tags.has("Pltm")))
    ) {
      out.push({ value: 1, measure: { dim: unit[0], base: unit[1] }, noun: t.lemma!, text: `${prev.raw} ${t.raw}` });
      continue;
    }
    if (ones && t.kind === "word" && t.lemma === "один" && ts[i + 1]?.kind === "word") value = 1;
    else if (t.kind === "num") {
      value = t.value!;
      // «5 тыс.», «2 млн»
      const next = ts[i + 1];
      if (next?.kind === "word" && MULTIPLIERS[next.lemma!] !== undefined) {
        value *= MULTIPLIERS[next.lemma!]!;
        end = i + 1;
      }
    } else if (t.kind === "word" && t.numeral) {
      // a run of numeral words: «двадцать три», «две тысячи пятьсот»
      let total = 0;
      let group = 0;
      let j = i;
      for (; j < ts.length && ts[j]!.kind === "word" && ts[j]!.numeral; j++) {
        const l = ts[j]!.lemma!;
        if (ts[j]!.numeral === "cardinal") group += CARDINALS[l]!;
        else {
          total += (group || 1) * MULTIPLIERS[l]!;
          group = 0;
        }
      }
      value = total + group;
      end = j - 1;
    }
    if (value === undefined) continue;
    const text = ts
      .slice(i, end + 1)
      .map((x) => x.raw)
      .join(" ");
    // a date: «14 марта [2025 [года]]»
    const after = ts[end + 1];
    if (
      after?.kind === "word" &&
      MONTHS[after.lemma!] !== undefined &&
      Number.isInteger(value) &&
      value >= 1 &&
      value <= 31
    ) {
      const date: DateParts = { d: value, m: MONTHS[after.lemma!]! };
      let k = end + 2;
      const y = ts[k];
      if (y?.kind === "num" && y.value! >= 1900 && y.value! <= 2100) {
        date.y = y.value!;
        k++;
        if (ts[k]?.kind === "word" && (ts[k]!.lemma === "год" || ts[k]!.raw === "г")) k++;
      }
      out.push({ value, date, text: `${text} ${after.raw}${date.y ? ` ${date.y}` : ""}` });
      i = k - 1;
      continue;
    }
    const unitOrNoun = following(ts, end + 1);
    // a year: «2025 года», «в 2025 году», «марта 2025» — a bare number in the range, not «2000 рублей»
    const before = ts[i - 1];
    const yearWord = after?.kind === "word" && (after.lemma === "год" || after.raw === "г");
    if (Number.isInteger(value) && value >= 1900 && value <= 2100 && (yearWord || !unitOrNoun.noun)) {
      const month = before?.kind === "word" ? MONTHS[before.lemma!] : undefined;
      if (month || yearWord || t.kind === "num") {
        out.push({ value, date: { y: value, ...(month ? { m: month } : {}) }, text });
        i = end + (yearWord ? 1 : 0);
        continue;
      }
    }
    const fig: Figure = { value, text };
    if (unitOrNoun.unit) {
      const [dim, factor] = unitOrNoun.unit;
      fig.measure = { dim: unitOrNoun.working && dim === "time" ? "workdays" : dim, base: value * factor };
      if (fig.measure.dim === "workdays") fig.measure.base = value;
      fig.noun = unitOrNoun.noun;
    } else if (unitOrNoun.noun) fig.noun = unitOrNoun.noun;
    else {
      // «полей — 5», «Всего композиций: 3»
      const prev = preceding(ts, i - 1);
      if (prev) fig.noun = prev;
    }
    out.push(fig);
    i = Math.max(i, end);
  }
}

/** The unit or counted noun after a number, skipping its adjectives («3 входных параметра», «10 рабочих дней»). */
function following(ts: Tok[], from: number): { unit?: [string, number]; noun?: string; working?: boolean } {
  let working = false;
  for (let k = from; k < Math.min(ts.length, from + 4); k++) {
    const t = ts[k]!;
    if (t.kind === "sign") return { unit: UNITS[t.raw]!, noun: t.raw };
    // «5 тыс. руб.»: an abbreviation's full stop
    if (
      t.kind === "punct" &&
      t.raw === "." &&
      k === from &&
      (ts[k - 1]?.raw.length ?? 9) <= 4 &&
      ts[k - 1]?.kind === "word"
    )
      continue;
    if (t.kind !== "word") return {};
    const l = t.lemma!;
    const abbr = lower(t.raw);
    if (WORKING.has(l) || WORKING.has(abbr)) {
      working = true;
      continue;
    }
    if (UNITS[l] || (t.raw.length <= 4 && UNITS[abbr])) return { unit: UNITS[l] ?? UNITS[abbr]!, noun: l, working };
    if (t.pos === "ADJF" || t.pos === "PRTF" || t.pos === "ADVB") {
      if (WORKING.has(l) || WORKING.has(abbr)) working = true;
      continue;
    }
    if (t.pos === "NOUN") return { noun: l };
    // a word whose likeliest reading is another part of speech but which reads as a counted noun
    // after a number («6 полей»: the imperative of «полить» first, the genitive of «поле» too)
    if (t.gent && !/^[a-z]+$/i.test(t.raw)) return { noun: t.gent };
    // English: "3 forms", "2 weeks"
    if (/^[a-z]+$/i.test(t.raw))
      return UNITS[abbr] ? { unit: UNITS[abbr]!, noun: abbr } : { noun: abbr.replace(/s$/, "") };
    return {};
  }
  return {};
}

function preceding(ts: Tok[], from: number): string | undefined {
  let k = from;
  while (k >= 0 && ts[k]!.kind === "punct" && /[:—–-]/.test(ts[k]!.raw)) k--;
  const t = ts[k];
  if (t?.kind !== "word") return undefined;
  // «полей — 5», «Всего композиций: 3»; with no dash only a genitive plural counts: «операторов четыре»
  return k === from ? t.gentPlur : t.gent;
}

/** Prepositions after which a bare unit means one of it: «после года», «раз в сутки», «за месяц». */
const ONE_UNIT_PREPS = new Set(["после", "через", "течение", "спустя"]);
/** «раз в сутки», «раз в год»: one of the unit as a period — unlike «в год» alone, a rate («28 дней в год»). */
const oneUnitBefore = (ts: Tok[], i: number): boolean => {
  const prev = ts[i - 1];
  if (prev?.kind !== "word") return false;
  const p = lower(prev.raw);
  return ONE_UNIT_PREPS.has(p) || ((p === "в" || p === "во") && lower(ts[i - 2]?.raw ?? "") === "раз");
};
