// Figures in a Workbench answer bind to the context the model was given (issue 31): a count of
// documents («3 композиции», «пять форм») or any other figure must be one the context holds — a
// list's total or its shown items, a number written in a passed document or passage, or in the
// user's own request. Like the Evidence contract, the rule is closed: a figure that is not there
// is refused, whatever words carry it. Ordinals of a numbered list («1. …») are format.
import type { ModelRequest } from "./model-request";

const UNITS: Record<string, number> = {
  ноль: 0,
  один: 1,
  одна: 1,
  одно: 1,
  одного: 1,
  одной: 1,
  одному: 1,
  два: 2,
  две: 2,
  двух: 2,
  двум: 2,
  двое: 2,
  три: 3,
  трех: 3,
  трём: 3,
  трем: 3,
  трое: 3,
  четыре: 4,
  четырех: 4,
  четверо: 4,
  пять: 5,
  пяти: 5,
  пятеро: 5,
  шесть: 6,
  шести: 6,
  семь: 7,
  семи: 7,
  восемь: 8,
  восьми: 8,
  девять: 9,
  девяти: 9,
  десять: 10,
  десяти: 10,
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
  пятьсот: 500,
  тысяча: 1000,
  тысячи: 1000,
  тысяч: 1000,
};

/** Numbers written in `text`: digit runs, and number words (a run of them summed: «двадцать три» → 23). */
export function numbersIn(text: string): number[] {
  const out: number[] = [];
  const lines = text.replace(/\[\[[^\]]*\]\]/g, " ").replace(/`[^`]*`/g, " ");
  for (const line of lines.split("\n")) {
    // a numbered list's marker is format, not a figure
    const body = line.replace(/^\s*\d{1,3}[.)]\s/, "");
    // identities and names with digits glued to letters («Проект Бета 2» is matched as a figure, so a name counts only if passed)
    for (const m of body.matchAll(/(?<![\p{L}\d-])\d+(?:[.,]\d+)?(?![\p{L}\d-])/gu))
      out.push(Number(m[0].replace(",", ".")));
    let run: number | null = null;
    for (const w of body
      .toLowerCase()
      .replace(/ё/g, "е")
      .split(/[^\p{L}]+/u)) {
      const v = UNITS[w];
      if (v === undefined) {
        if (run !== null) out.push(run);
        run = null;
      } else run = run === null ? v : v === 1000 ? run * 1000 : run + v;
    }
    if (run !== null) out.push(run);
  }
  return out;
}

/** The figures the model was given: list sizes and totals, figures in passed content, passages and the request. */
export function contextNumbers(req: ModelRequest): Set<number> {
  const out = new Set<number>(numbersIn(req.request));
  for (const b of req.context) {
    if (b.kind === "list") {
      out.add(b.total);
      out.add(b.items.length);
      if (b.total > b.items.length) out.add(b.total - b.items.length);
      for (const i of b.items) numbersIn(i.displayName).forEach((n) => out.add(n));
    } else if (b.kind === "entity") {
      numbersIn(`${b.displayName}\n${JSON.stringify(b.content)}`).forEach((n) => out.add(n));
      // a document's own lists: «Поля: a, b, c» may be counted
      const walk = (v: unknown): void => {
        if (Array.isArray(v)) {
          out.add(v.length);
          v.forEach(walk);
        } else if (v && typeof v === "object") Object.values(v).forEach(walk);
      };
      walk(b.content);
    } else numbersIn(`${b.heading}\n${b.text}`).forEach((n) => out.add(n));
  }
  for (const m of req.conversation) numbersIn(m.text).forEach((n) => out.add(n));
  // how many documents of each kind the answer may name: the identities passed
  out.add(req.context.filter((b) => b.kind === "entity").length);
  return out;
}

/** Figures of `answer` the context does not hold. */
export function unsupportedNumbers(answer: string, allowed: ReadonlySet<number>): number[] {
  return [...new Set(numbersIn(answer).filter((n) => !allowed.has(n)))];
}
