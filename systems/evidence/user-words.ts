// Whether the user's own words carry a value (seed 002 §11.3): a premise is "confirmed" only
// when they do. The comparison is by word stems and digits, so «Альфа-Снабу» carries
// «Альфа-Снаб» and «31 марта» carries «31 марта 2026»'s day and month — but a date, a name or
// a reading the interpreter model added on its own is not carried, however plausible.
import { findDateSurface } from "./mcp-server/dates";

const STOP = new Set(["ооо", "ао", "пао", "зао", "ип", "на", "по", "у", "с", "для", "от", "год", "года", "г"]);

export const normWords = (s: string) =>
  s
    .toLowerCase()
    .replace(/ё/g, "е")
    .split(/[^a-zа-я0-9]+/)
    .filter((w) => w && !STOP.has(w) && (w.length > 1 || /\d/.test(w)));

/** A Russian stem good enough for names and terms: the word without its last two letters. */
const stem = (w: string) => (/^\d+$/.test(w) ? w : w.length <= 4 ? w : w.slice(0, Math.max(4, w.length - 2)));

function wordCarried(w: string, text: string[]): boolean {
  if (/^\d+$/.test(w)) return text.some((t) => t === w || (/^\d+$/.test(t) && Number(t) === Number(w)));
  const s = stem(w);
  return text.some((t) => t.startsWith(s) || (t.length >= 4 && w.startsWith(stem(t))));
}

/** Every significant word of `value` is in the user's words (this turn or the clarified question). */
export function carriedBy(value: string, userTexts: (string | null | undefined)[]): boolean {
  const words = normWords(value);
  if (!words.length) return false;
  const text = userTexts.filter((t): t is string => !!t).flatMap(normWords);
  return words.every((w) => wordCarried(w, text));
}

/** The date words the user wrote, if any (this turn first, then the question being clarified). */
export function userDateSurface(userTexts: (string | null | undefined)[]): string | null {
  for (const t of userTexts)
    if (t) {
      const d = findDateSurface(t);
      if (d) return d;
    }
  return null;
}

/** Which side of the settlements the user asks about, from their words only. */
export function askedRole(text: string): "supplier" | "customer" | null {
  const t = text.toLowerCase().replace(/ё/g, "е");
  if (/нам\s+(?:[а-я]+\s+)?долж|должн[а-я]*\s+нам|дебитор|покупател|заказчик|клиент[а-я]*\s+долж/.test(t))
    return "customer";
  if (
    /мы\s+(?:[а-я]+\s+)?долж|должны\s+мы|наш\s+долг|долг\s+перед|кредитор|поставщик|задолжали|оплатить\s+поставщ/.test(
      t,
    )
  )
    return "supplier";
  return null;
}
