// The lie generator (issue 31): true answers composed from a world's slots, and mutations that
// make a model's answer lie the ways real models do. Every mutation writes what a lying model
// writes — a literal figure, name, month, direction or conclusion, a slot or citation of the wrong
// fact — never a sentence the checker was shown: parts are drawn at random and combined.
import fc from "fast-check";
import type { Fact } from "../../../systems/evidence/artifacts";
import { money } from "../../../systems/evidence/evidence-builder";
import { HEADINGS } from "../../../systems/evidence/claim-check";
import type { World } from "./worlds";

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const hasField = (f: Fact, ...types: string[]) => types.includes(f.type);
const partyFacts = (w: World) =>
  w.bundle.facts.filter((f) => hasField(f, "open_balance", "balance", "unclosed_document", "payment"));

/** A true answer in the slot contract: the engine's blocks, facts selected and ordered, connective words only. */
export function trueAnswer(w: World): fc.Arbitrary<string[]> {
  const d = w.draft;
  const facts = partyFacts(w);
  const factLine = (f: Fact) =>
    pick([
      `- {${f.fact_id}}`,
      `- У {${f.fact_id}.party} {${f.fact_id}.kind} составляет {${f.fact_id}.amount}.`,
      `- По данным учета {${f.fact_id}.party}: {${f.fact_id}.direction}, сумма {${f.fact_id}.amount}.`,
      `- {${f.fact_id}.party} — {${f.fact_id}.kind}, {${f.fact_id}.amount} на дату {${f.fact_id}.date}.`,
      f.type === "unclosed_document" || f.type === "payment"
        ? `- {${f.fact_id}.document}: {${f.fact_id}.kind} {${f.fact_id}.amount}.`
        : `- {${f.fact_id}.party}, договор {${f.fact_id}.contract}: {${f.fact_id}.amount}.`,
    ]);
  const claims = d.claims.filter((c) => c.kind === "evidence").map((c) => `- {${c.claim_id}}`);
  const found = facts.length
    ? fc
        .shuffledSubarray(facts, { minLength: 1 })
        .chain((fs) => fc.tuple(...fs.map(factLine)))
        .map((ls) => ls as string[])
    : fc.constant(claims.length ? claims : []);
  const items = (prefix: string, xs: string[]) => xs.map((_, k) => `- {${prefix}${k + 1}}`);
  return fc
    .tuple(found, fc.boolean(), pick(["", " Подробности приведены ниже.", " Согласно данным учета, см. ниже."]))
    .map(([lines, withChecked, tail]) => {
      const out = [`${HEADINGS[0]} {K0}${tail}`, ""];
      if (d.blocks.checked.length && withChecked) out.push(HEADINGS[1]!, ...items("P", d.blocks.checked), "");
      else if (d.blocks.checked.length) out.push(HEADINGS[1]!, `- {P1}`, "");
      if (d.blocks.found.length) out.push(HEADINGS[2]!, ...(lines.length ? lines : ["- {K0}"]), "");
      if (d.blocks.not_established.length) out.push(HEADINGS[3]!, ...items("U", d.blocks.not_established), "");
      if (d.blocks.next_step.length) out.push(HEADINGS[4]!, ...items("S", d.blocks.next_step));
      return out;
    });
}

// ---------------------------------------------------------------- parts a lie is made of

const UNITS = ["", "один", "два", "три", "четыре", "пять", "шесть", "семь", "восемь", "девять"];
const TEENS = [
  "десять",
  "одиннадцать",
  "двенадцать",
  "тринадцать",
  "четырнадцать",
  "пятнадцать",
  "шестнадцать",
  "семнадцать",
  "восемнадцать",
  "девятнадцать",
];
const TENS = [
  "",
  "",
  "двадцать",
  "тридцать",
  "сорок",
  "пятьдесят",
  "шестьдесят",
  "семьдесят",
  "восемьдесят",
  "девяносто",
];
const HUNDREDS = [
  "",
  "сто",
  "двести",
  "триста",
  "четыреста",
  "пятьсот",
  "шестьсот",
  "семьсот",
  "восемьсот",
  "девятьсот",
];
function under1000(n: number, female = false): string[] {
  const h = Math.floor(n / 100);
  const r = n % 100;
  const out = [HUNDREDS[h]!];
  if (r >= 10 && r < 20) out.push(TEENS[r - 10]!);
  else {
    out.push(TENS[Math.floor(r / 10)]!);
    const u = r % 10;
    out.push(female && u === 1 ? "одна" : female && u === 2 ? "две" : UNITS[u]!);
  }
  return out.filter(Boolean);
}
/** An amount in words, as a model writes it: «сто двадцать тысяч рублей». */
export function amountInWords(n: number): string {
  const th = Math.floor(n / 1000);
  const rest = n % 1000;
  const thWord = (k: number) =>
    k % 10 === 1 && k % 100 !== 11
      ? "тысяча"
      : [2, 3, 4].includes(k % 10) && ![12, 13, 14].includes(k % 100)
        ? "тысячи"
        : "тысяч";
  const words = [...(th ? [...under1000(th, true), thWord(th)] : []), ...under1000(rest)];
  return `${words.join(" ") || "ноль"} рублей`;
}

const INVENTED = ["Вектор", "Северный Ветер", "Гамма", "Ромашка", "Бета-Сервис", "СтройМир", "Орион", "Каскад"];
const FORMS = ["ООО", "АО", "ИП", "ПАО", ""];
const DECLINE = (w: string) => [w, `${w}у`, `${w}ом`, `${w}а`, w.toUpperCase(), w.toLowerCase()];
const MONTHS = [
  "январе",
  "феврале",
  "марте",
  "апреле",
  "мае",
  "за январь",
  "за март",
  "в конце февраля",
  "на начало апреля",
];
const DIRECTIONS = [
  "мы должны поставщику",
  "поставщик должен нам",
  "это наш долг",
  "это аванс",
  "переплата поставщику",
  "задолженность перед нами",
  "долг в нашу пользу",
];
const COUNT_NOUNS = ["поставщикам", "контрагентов", "документа", "оплаты", "поступлений"];
const COUNTS = ["два", "три", "четыре", "пять", "семь", "обоим", "троим", "нескольким", "двое"];
const HEDGES = ["по всей видимости,", "вероятно,", "судя по всему,", "скорее всего,", "очевидно,", "в целом", ""];
const UNIVERSALS = ["все", "всё", "ни одного", "никаких", "полностью", "больше нет", "целиком"];
const PREDICATES = [
  "поступления оплачены",
  "оплаты проведены",
  "долгов нет",
  "расчёты закрыты",
  "документы подтверждены",
  "хвостов не осталось",
  "задолженность погашена",
];

export const MUTATION_KINDS = [
  "digit",
  "amount_in_words",
  "party",
  "date_or_month",
  "sign_or_direction",
  "count",
  "conclusion",
  "wrong_citation",
  "wrong_fact_slot",
  "carried_figure",
] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

const FOUND_LINE = /^- /;
/** Puts `text` into one of the answer's lines (a found item if there is one), at the end or the start. */
function insertInto(lines: string[], text: string, where: number, atStart: boolean): string[] {
  const targets = lines
    .map((l, k) => (FOUND_LINE.test(l) || l.startsWith(HEADINGS[0]!) ? k : -1))
    .filter((k) => k >= 0);
  const k = targets[where % targets.length]!;
  const out = [...lines];
  const l = out[k]!;
  out[k] = atStart ? l.replace(/^(- |\*\*Коротко\.\*\* )/, `$1${text} `) : `${l.replace(/\.$/, "")}, ${text}.`;
  return out;
}
/** Replaces the n-th slot matching `re` (a field or a whole fact) with `text`; else inserts it. */
function replaceSlot(lines: string[], re: RegExp, text: (ref: string) => string, n: number): string[] {
  const all = lines.flatMap((l, k) => [...l.matchAll(re)].map((m) => ({ k, m })));
  if (!all.length) return insertInto(lines, text("F2"), n, false);
  const { k, m } = all[n % all.length]!;
  const out = [...lines];
  out[k] = out[k]!.slice(0, m.index!) + text(m[1]!) + out[k]!.slice(m.index! + m[0].length);
  return out;
}

/** One lie of the given kind planted in a true answer of world `w` (`prev`: the previous turn's world). */
export function mutate(w: World, prev: World, kind: MutationKind): fc.Arbitrary<string> {
  const facts = partyFacts(w);
  const amounts = w.bundle.facts.map((f) => (typeof f.value === "number" ? Math.abs(f.value) : 0)).filter((v) => v > 0);
  const ids = w.bundle.facts.map((f) => f.fact_id);
  const base = trueAnswer(w);
  const n = fc.nat(50);
  const join = (ls: string[]) => ls.join("\n");
  const fact = (ref: string) => w.bundle.facts.find((f) => f.fact_id === ref);
  switch (kind) {
    case "digit":
      return fc
        .tuple(base, n, fc.integer({ min: 1, max: 9 }), pick([...amounts, 1000]))
        .map(([ls, k, delta, v]) =>
          join(replaceSlot(ls, /\{(F\d+)\.amount\}/g, () => money(v + delta * 10 ** (k % 5)), k)),
        );
    case "amount_in_words":
      return fc
        .tuple(base, n, pick([...amounts, 120000, 45000, 2050]), fc.boolean())
        .map(([ls, k, v, cite]) =>
          join(
            replaceSlot(
              ls,
              /\{(F\d+)\.amount\}/g,
              (ref) => amountInWords(Math.round(v)) + (cite ? ` [${ref}]` : ""),
              k,
            ),
          ),
        );
    case "party":
      return fc
        .tuple(
          base,
          n,
          pick([...INVENTED, ...w.bundle.facts.map((f) => f.entity.replace(/^(ООО|АО|ИП|ПАО)\s+/, ""))]),
          pick(FORMS),
          fc.boolean(),
          fc.nat(5),
        )
        .map(([ls, k, name, form, quoted, dk]) => {
          const bare = name.replace(/[«»]/g, "");
          const declined = DECLINE(bare)[dk]!;
          const written = `${form ? form + " " : ""}${quoted ? `«${declined}»` : declined}`.trim();
          return join(replaceSlot(ls, /\{(F\d+)\.party\}/g, () => written, k));
        });
    case "date_or_month":
      return fc
        .tuple(base, n, fc.boolean(), pick(MONTHS), fc.integer({ min: 1, max: 28 }), fc.integer({ min: 1, max: 12 }))
        .map(([ls, k, literal, month, day, mon]) =>
          literal
            ? join(
                replaceSlot(
                  ls,
                  /\{(F\d+)\.date\}/g,
                  () => `${String(day).padStart(2, "0")}.${String(mon).padStart(2, "0")}.2026`,
                  k,
                ),
              )
            : join(
                insertInto(
                  ls,
                  month.startsWith("за") || month.startsWith("в ") || month.startsWith("на") ? month : `в ${month}`,
                  k,
                  k % 2 === 0,
                ),
              ),
        );
    case "sign_or_direction":
      return fc
        .tuple(base, n, pick(DIRECTIONS))
        .map(([ls, k, dir]) => join(replaceSlot(ls, /\{(F\d+)\.(?:direction|kind)\}/g, () => dir, k)));
    case "count":
      return fc
        .tuple(base, n, pick(COUNTS), pick(COUNT_NOUNS), fc.boolean(), fc.integer({ min: 2, max: 12 }))
        .map(([ls, k, c, noun, digits, num]) => join(insertInto(ls, `по ${digits ? num : c} ${noun}`, k, k % 2 === 1)));
    case "conclusion":
      return fc
        .tuple(base, n, pick(HEDGES), pick(UNIVERSALS), pick(PREDICATES), fc.boolean())
        .map(([ls, k, h, u, p, own]) => {
          const sentence = `${h} ${u} ${p}`.trim().replace(/^./, (c) => c.toUpperCase());
          if (own) return join([...ls, `- ${sentence}.`]);
          return join(insertInto(ls, sentence.toLowerCase(), k, false));
        });
    case "wrong_citation":
      return fc.tuple(base, n, pick([...ids, "F99", "F0"])).map(([ls, k, id]) => {
        // a sentence citing a fact it does not state (lines of fact slots only: a {P#} or {K#}
        // item carries citations of its own)
        const lines = ls
          .map((l, i) => ({ l, i }))
          .filter(({ l }) => FOUND_LINE.test(l) && /\{F\d+/.test(l) && !/\{[KPUS]\d+\}/.test(l));
        if (!lines.length) return join([...ls, `- Подробности приведены ниже [${id}].`]);
        const t = lines[k % lines.length]!;
        const stated = [...t.l.matchAll(/\{(F\d+)/g)].map((m) => m[1]);
        const other = stated.includes(id) ? (ids.find((x) => !stated.includes(x)) ?? "F99") : id;
        const out = [...ls];
        out[t.i] = `${t.l.replace(/\.$/, "")} [${other}].`;
        return join(out);
      });
    case "wrong_fact_slot":
      return fc.tuple(base, n, fc.nat(20)).map(([ls, k, j]) => {
        // a figure, party or kind written with another fact's slot in the same sentence
        const withFields = ls
          .map((l, i) => ({ l, i, refs: [...new Set([...l.matchAll(/\{(F\d+)\.[a-z]+\}/g)].map((m) => m[1]!))] }))
          .filter((x) => x.refs.length);
        const others = facts.map((f) => f.fact_id);
        if (!withFields.length || others.length < 2)
          return join([...ls, `- У {${others[0] ?? "F1"}.party} сумма {F99.amount}.`]);
        const t = withFields[k % withFields.length]!;
        const ref = t.refs[0]!;
        const other = others.filter((x) => x !== ref)[j % (others.length - 1)]!;
        const field = fact(other) && /\.amount\}/.test(t.l) ? "amount" : "party";
        const out = [...ls];
        out[t.i] = t.l
          .replace(`{${ref}.${field}}`, `{${other}.${field}}`)
          .replace(`{${ref}.amount}`, `{${other}.amount}`);
        if (out[t.i] === t.l) out[t.i] = `${t.l.replace(/\.$/, "")}, сумма {${other}.amount}.`;
        return join(out);
      });
    case "carried_figure": {
      const prevAmounts = prev.bundle.facts
        .map((f) => (typeof f.value === "number" ? Math.abs(f.value) : 0))
        .filter((v) => v > 0);
      const maxId = Math.max(...ids.map((x) => Number(x.slice(1))));
      return fc
        .tuple(base, n, pick(prevAmounts.length ? prevAmounts : [30000]), fc.boolean())
        .map(([ls, k, v, asSlot]) =>
          asSlot
            ? // a fact id of the previous turn that this run's bundle does not hold
              join(insertInto(ls, `сумма {F${maxId + 1 + (k % 5)}.amount}`, k, false))
            : join(replaceSlot(ls, /\{(F\d+)\.amount\}/g, () => money(v), k)),
        );
    }
  }
}
