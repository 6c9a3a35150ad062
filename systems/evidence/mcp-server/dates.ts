// Dates and periods from Russian phrases, against the base's working date. Pure; the
// resolve_period_or_asof tool is a thin wrapper, so the rules are testable without MCP.

const MONTHS: [RegExp, number][] = [
  [/^январ/, 1],
  [/^феврал/, 2],
  [/^март/, 3],
  [/^апрел/, 4],
  [/^ма[йяюе]/, 5],
  [/^июн/, 6],
  [/^июл/, 7],
  [/^август/, 8],
  [/^сентябр/, 9],
  [/^октябр/, 10],
  [/^ноябр/, 11],
  [/^декабр/, 12],
];

const pad = (n: number) => String(n).padStart(2, "0");
export const iso = (y: number, m: number, d: number) => `${y}-${pad(m)}-${pad(d)}`;
const lastDay = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

function valid(y: number, m: number, d: number): boolean {
  return m >= 1 && m <= 12 && d >= 1 && d <= lastDay(y, m) && y >= 1990 && y <= 2100;
}

function month(word: string): number | null {
  for (const [re, n] of MONTHS) if (re.test(word)) return n;
  return null;
}

export interface ParsedDate {
  as_of_date: string;
  period_from: string | null;
  period_to: string | null;
  /** How the phrase was read, for the tool's note (the user sees it as a premise). */
  reading: string;
  /** Counted from the base's working date («вчера»), not named by the user as a calendar date. */
  relative?: boolean;
}

/**
 * The one place a date phrase is validated (§12.3): a calendar date that does not exist
 * (31.02.2026) and a date after the base's working date are reported as such, never read as
 * "no data"; a relative date is resolved against the working date and says so.
 */
export type DateCheck =
  | { kind: "ok"; parsed: ParsedDate }
  | { kind: "impossible"; surface: string }
  | { kind: "future"; parsed: ParsedDate }
  | { kind: "none" };

export function checkDatePhrase(text: string, workingDate: string): DateCheck {
  const t = text.toLowerCase().replace(/ё/g, "е");
  const numeric = t.match(
    /(\d{1,2})[./](\d{1,2})[./](\d{2,4})|(\d{4})-(\d{2})-(\d{2})|(\d{1,2})\s+(январ|феврал|март|апрел|ма[йяе]|июн|июл|август|сентябр|октябр|ноябр|декабр)[а-я]*(?:\s+(\d{4}))?/,
  );
  if (numeric) {
    const [y, mo, d] = numeric[1]
      ? [+numeric[3]! < 100 ? +numeric[3]! + 2000 : +numeric[3]!, +numeric[2]!, +numeric[1]!]
      : numeric[4]
        ? [+numeric[4]!, +numeric[5]!, +numeric[6]!]
        : [numeric[9] ? +numeric[9] : +workingDate.slice(0, 4), month(numeric[8]!) ?? 0, +numeric[7]!];
    if (!valid(y, mo, d)) return { kind: "impossible", surface: numeric[0]! };
  }
  const parsed = parseDatePhrase(text, workingDate);
  if (!parsed) return { kind: "none" };
  if (parsed.as_of_date > workingDate) return { kind: "future", parsed };
  return { kind: "ok", parsed };
}

/** Reads an as-of date or a period; null when the text holds no date. */
export function parseDatePhrase(text: string, workingDate: string): ParsedDate | null {
  const t = text.toLowerCase().replace(/ё/g, "е").replace(/\s+/g, " ").trim();
  const [wy, wm] = workingDate.split("-").map(Number) as [number, number, number];
  let m: RegExpMatchArray | null;

  if ((m = t.match(/(?<![а-я])с\s+(\d{1,2})[./](\d{1,2})[./](\d{4})\s+по\s+(\d{1,2})[./](\d{1,2})[./](\d{4})/))) {
    const [a, b] = [
      [+m[3]!, +m[2]!, +m[1]!],
      [+m[6]!, +m[5]!, +m[4]!],
    ] as const;
    if (valid(...a) && valid(...b)) {
      const to = iso(...b);
      return { as_of_date: to, period_from: iso(...a), period_to: to, reading: `период ${iso(...a)} — ${to}` };
    }
  }
  if ((m = t.match(/(\d{4})-(\d{2})-(\d{2})/))) {
    const [y, mo, d] = [+m[1]!, +m[2]!, +m[3]!];
    if (valid(y, mo, d))
      return { as_of_date: iso(y, mo, d), period_from: null, period_to: null, reading: `дата ${iso(y, mo, d)}` };
  }
  if ((m = t.match(/(\d{1,2})[./](\d{1,2})[./](\d{2,4})/))) {
    let y = +m[3]!;
    if (y < 100) y += 2000;
    const [mo, d] = [+m[2]!, +m[1]!];
    if (valid(y, mo, d))
      return { as_of_date: iso(y, mo, d), period_from: null, period_to: null, reading: `дата ${iso(y, mo, d)}` };
  }
  if ((m = t.match(/(\d{1,2})\s+([а-я]+)(?:\s+(\d{4}))?/))) {
    const mo = month(m[2]!);
    const y = m[3] ? +m[3] : wy;
    if (mo && valid(y, mo, +m[1]!))
      return {
        as_of_date: iso(y, mo, +m[1]!),
        period_from: null,
        period_to: null,
        reading: `дата ${iso(y, mo, +m[1]!)}${m[3] ? "" : " (год — год рабочей даты)"}`,
      };
  }
  if ((m = t.match(/(конец|начало|конц[еау])\s+([а-я]+)(?:\s+(\d{4}))?/))) {
    const end = m[1]!.startsWith("кон");
    const word = m[2]!;
    const yearOnly = word.startsWith("год") ? true : false;
    if (word.startsWith("месяц")) {
      // «на конец месяца»: the last month that has ended by the working date.
      const [y, mo] = wm === 1 ? [wy - 1, 12] : [wy, wm - 1];
      const d = end ? iso(y, mo, lastDay(y, mo)) : iso(wy, wm, 1);
      return {
        as_of_date: d,
        period_from: null,
        period_to: null,
        reading: end ? `конец последнего закрытого месяца (${d})` : `начало текущего месяца (${d})`,
      };
    }
    if (word.startsWith("квартал")) {
      const q = Math.floor((wm - 1) / 3); // current quarter index; the last ended one is q-1
      const [y, qe] = q === 0 ? [wy - 1, 12] : [wy, q * 3];
      const d = iso(y, qe, lastDay(y, qe));
      return {
        as_of_date: d,
        period_from: null,
        period_to: null,
        reading: `конец последнего закрытого квартала (${d})`,
      };
    }
    if (yearOnly || /^\d{4}$/.test(m[3] ?? "")) {
      const y = m[3] ? +m[3] : wy - 1;
      const d = end ? iso(y, 12, 31) : iso(y, 1, 1);
      return { as_of_date: d, period_from: null, period_to: null, reading: `${end ? "конец" : "начало"} ${y} года` };
    }
    const mo = month(word);
    if (mo) {
      const y = m[3] ? +m[3] : mo > wm ? wy - 1 : wy;
      const d = end ? iso(y, mo, lastDay(y, mo)) : iso(y, mo, 1);
      return {
        as_of_date: d,
        period_from: null,
        period_to: null,
        reading: `${end ? "конец" : "начало"} месяца (${d})`,
      };
    }
  }
  if ((m = t.match(/(?<![а-я])за\s+([а-я]+)(?:\s+(\d{4}))?/))) {
    const mo = month(m[1]!);
    if (mo) {
      const y = m[2] ? +m[2] : mo > wm ? wy - 1 : wy;
      const from = iso(y, mo, 1);
      const to = iso(y, mo, lastDay(y, mo));
      return { as_of_date: to, period_from: from, period_to: to, reading: `период ${from} — ${to}` };
    }
  }
  if ((m = t.match(/(\d{4})\s*год/))) {
    const y = +m[1]!;
    return { as_of_date: iso(y, 12, 31), period_from: iso(y, 1, 1), period_to: iso(y, 12, 31), reading: `${y} год` };
  }
  if ((m = t.match(/(?<![а-я])(позавчера|вчера)(?![а-я])/))) {
    const back = m[1] === "вчера" ? 1 : 2;
    const d = new Date(Date.parse(`${workingDate}T00:00:00Z`) - back * 86_400_000).toISOString().slice(0, 10);
    return {
      as_of_date: d,
      period_from: null,
      period_to: null,
      reading: `«${m[1]}» относительно рабочей даты базы ${workingDate} — ${d}`,
      relative: true,
    };
  }
  if (/сегодня|текущ[а-я]* дат|сейчас|на данный момент|на текущий момент/.test(t)) {
    return {
      as_of_date: workingDate,
      period_from: null,
      period_to: null,
      reading: `текущая (рабочая) дата ${workingDate}`,
    };
  }
  return null;
}

/** The words of a message that name a date or period, for the interpreter (null: none). */
export function findDateSurface(text: string): string | null {
  const t = text.toLowerCase().replace(/ё/g, "е");
  const re =
    /(с\s+\d{1,2}[./]\d{1,2}[./]\d{4}\s+по\s+\d{1,2}[./]\d{1,2}[./]\d{4}|\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}|\d{1,2}\s+(?:январ|феврал|март|апрел|ма[йяе]|июн|июл|август|сентябр|октябр|ноябр|декабр)[а-я]*(?:\s+\d{4})?|(?:конец|начало|конц[еау])\s+[а-я]+(?:\s+\d{4})?|за\s+(?:январ|феврал|март|апрел|ма[йяе]|июн|июл|август|сентябр|октябр|ноябр|декабр)[а-я]*(?:\s+\d{4})?|\d{4}\s*год[а-я]*|позавчера|вчера|сегодня|текущ[а-я]* дат[а-я]*|сейчас|на данный момент|на текущий момент)/;
  const m = t.match(re);
  return m ? m[1]! : null;
}
