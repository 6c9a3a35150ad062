// The only text the answer model writes itself: an opening and a closing line around the claims it
// chose (answer-choice.ts). Such a line is shown only when it is provably fact-free, decided by the
// grammar of the line rather than by a list of sentences (issue 42):
//  - characters: letters and plain punctuation; a digit, quote, bracket or inline markup is a figure,
//    a name, an id or formatting that could restyle a claim. A whole-line heading or emphasis
//    («### Итоги», «**Ответ**») is the line's own layout and is read without it; a block's title
//    in quotes («Что найдено») points at the answer, it says nothing;
//  - words, by their dictionary form (lang/morph.ts, the `az` OpenCorpora dictionaries): courtesy
//    and pointers («Здравствуйте», «Вот что показала проверка», «Надеюсь, это поможет»), function
//    words, and nouns or full adjectives the user said this turn (the question, the premises they
//    confirmed) or that name the workflow's topic («вопросы по расчётам»). A verb, a short form or a
//    numeral is never taken from the user's words: «мы должны …» turns the question into a claim;
//  - operators that change a meaning are never free: negation, «или/либо», quantifiers, hedges;
//  - a date or a quoted name only as the user wrote it this turn (the question's own date);
//  - that something could not be done («получить данные не удалось», «проверка не завершена»): a
//    negated verb of doing, only when a tool of this run failed — the statement is bound to the fault;
//  - when the line has a predicate of its own (a courtesy verb other than «приведены/представлены»,
//    or a dash between two phrases), the user's and topic words stand only in an adjunct introduced
//    by a preposition («вопросы по расчётам», «ответ по ООО «Альфа-Снаб» на 31.03.2026»), never as
//    what the predicate says something about («Проверка показала долги»).
import { readings, type Reading } from "../../lang/morph";
import { BLOCK_RU } from "./claims-menu";

/** Greetings, courtesy, pointers to the answer: dictionary forms (ё written е, as lang/morph.ts gives them). */
const COURTESY = new Set(
  [
    "здравствовать здравствуйте добрый день вечер утро привет приветствовать спасибо благодарить пожалуйста",
    "вот ниже выше далее итог итоговый результат сводка краткий кратко коротко подробный подробно подробнее",
    "ответ вопрос запрос обращение обращаться писать спрашивать быть появиться возникнуть остаться",
    "понадобиться потребоваться готовый готов рад радый помочь помощь уточнить уточнение надеяться полезный",
    "полезно информация выяснить удаться собрать подготовить привести представить показать проверка",
    "данные дать учет учетный база уважение ассистент следующий хороший деталь нужный нужно дополнительный",
    "мочь знать сообщить каждый ваш мой который этот какой еще также обратить внимание блок другой подробность",
    "сожаление извинение приносить неудобство попробовать повторить позже чуть немного часть новый небольшой",
    "понимание ждать теперь конечно хорошо",
  ]
    .join(" ")
    .split(/\s+/),
);
/** Courtesy verbs that only present what follows («Ниже приведены …»): the line stays a pointer. */
const PRESENTING = new Set(["привести", "представить", "собрать", "подготовить"]);
/** Courtesy verbs of asking and offering: what follows them is asked about or offered, not stated («уточнить дату»). */
const ASKING = new Set([
  "уточнить",
  "помочь",
  "обращаться",
  "писать",
  "спрашивать",
  "сообщить",
  "знать",
  "попробовать",
  "повторить",
  "обратить",
]);
/** Verbs of doing that a run whose tool failed may say were not done (only negated, only then). */
const NOT_DONE = new Set(["удаться", "выполнить", "завершить", "получить", "ответить", "загрузить", "пройти"]);
/** The workflow's topic nouns: what a question about settlements is about, never what is true of it. */
const TOPIC = new Set(
  "расчет взаиморасчет поставщик контрагент документ оплата платеж задолженность долг остаток сальдо срок".split(" "),
);
/** Meaning operators: negation, alternatives, quantifiers, hedges, number words. */
const OPERATORS = new Set(
  [
    "не ни нет или либо все всё весь всего ничто ничего никто никакой ноль нуль только лишь почти около",
    "примерно приблизительно вероятно возможно наверное якобы кажется видимо полностью частично",
  ]
    .join(" ")
    .split(/\s+/),
);
const FUNCTION_POS = new Set(["PREP", "CONJ", "PRCL", "INTJ", "NPRO"]);
/** Parts of speech that state something (a verb, a short form, a predicative) or count. */
const PREDICATE_POS = new Set(["VERB", "INFN", "ADJS", "PRTS", "PRED", "GRND"]);
const COUNTING = (r: Reading) => r.pos === "NUMR" || r.tags.has("Anum");

/** A figure as a model writes one: grouped thousands, a fraction, a date's parts, a currency or percent sign. */
const FIGURE =
  /\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?:\s*(?:₽|руб\.?|%))?|\d+(?:[.,]\d+)*(?:\s*(?:₽|руб\.?|%))?/gu;
const DATE = /\b\d{1,2}\.\d{1,2}\.\d{4}\b/g;
const NAME = /(?:(?<!\p{L})(?:ООО|АО|ПАО|ЗАО|ИП)\s+)?«[^«»\n]{1,80}»/gu;
const TOKEN = /\p{L}+(?:-\p{L}+)*|[—–]|\s-\s|[,.!?:;]/gu;
const SAID = "SAIDWORDS"; // a date or name the user wrote, as one word-like token

const bareName = (n: string) => n.replace(/^(?:ООО|АО|ПАО|ЗАО|ИП)\s+/, "");

/** What the user said this turn, as the check reads it: dates, quoted names and dictionary forms of words. */
function saidOf(said: readonly string[]) {
  const text = said.join("\n");
  const lemmas = new Set<string>();
  for (const w of text.match(/\p{L}+(?:-\p{L}+)*/gu) ?? []) {
    lemmas.add(w.toLowerCase().replace(/ё/g, "е"));
    for (const r of readings(w)) if (!PREDICATE_POS.has(r.pos) && !COUNTING(r)) lemmas.add(r.lemma);
  }
  // «не закрыты» said is «незакрытые» restated: the negated word's adjective is the user's word too.
  for (const m of text.matchAll(/(?<!\p{L})не\s+(\p{L}+)/giu))
    for (const r of readings(`не${m[1]}`)) if (r.known && !COUNTING(r)) lemmas.add(r.lemma);
  return { dates: new Set(text.match(DATE) ?? []), names: new Set((text.match(NAME) ?? []).map(bareName)), lemmas };
}

/** The line without its own layout: a heading mark, or emphasis around the whole line. */
function unwrap(t: string): string {
  const line = t.replace(/^#{1,6}\s+/, "").trim();
  const m = line.match(/^(\*\*|__|\*|_)([^*_]+)\1$/);
  return (m ? m[2]! : line).trim();
}

type Kind = "courtesy" | "function" | "said" | "outside" | "operator";
interface Word {
  text: string;
  kind: Kind;
  preposition: boolean;
  predicate: boolean;
  /** A verb of asking or offering: its object is not stated. */
  asking?: boolean;
}

function classify(w: string, said: ReturnType<typeof saidOf>, notDone: boolean): Word {
  const lower = w.toLowerCase();
  const rs = readings(w);
  const base = { text: w, preposition: false, predicate: false };
  if (w === SAID) return { ...base, kind: "said" };
  if (notDone && (lower === "не" || rs.some((r) => NOT_DONE.has(r.lemma) && PREDICATE_POS.has(r.pos))))
    return { ...base, kind: "courtesy", predicate: lower !== "не" };
  if (OPERATORS.has(lower) || rs.some((r) => OPERATORS.has(r.lemma) && r === rs[0]))
    return { ...base, kind: "operator" };
  const courtesy = rs.find((r) => COURTESY.has(r.lemma)) ?? (COURTESY.has(lower) ? rs[0] : undefined);
  if (courtesy || COURTESY.has(lower))
    return {
      ...base,
      kind: "courtesy",
      predicate: !!courtesy && PREDICATE_POS.has(courtesy.pos) && !PRESENTING.has(courtesy.lemma),
      asking: !!courtesy && ASKING.has(courtesy.lemma),
    };
  if (rs[0] && FUNCTION_POS.has(rs[0].pos)) return { ...base, kind: "function", preposition: rs[0].pos === "PREP" };
  // A noun or a full adjective the user said, or a topic noun; never a predicate or a number word.
  const named = rs.find((r) => said.lemmas.has(r.lemma) || TOPIC.has(r.lemma));
  if ((named && !PREDICATE_POS.has(named.pos) && !COUNTING(named)) || (!rs.length && said.lemmas.has(lower)))
    return { ...base, kind: "said" };
  return { ...base, kind: "outside" };
}

/** Why a line the model added is not provably fact-free; empty: it may be shown. `said`: the user's words this turn. */
export function factFreeIssues(text: string, said: readonly string[] = [], faulted = false): string[] {
  const t = text.trim();
  if (!t) return [];
  if (/\n/.test(t)) return ["несколько строк"];
  const words = saidOf(said);
  let line = unwrap(t);
  for (const title of Object.values(BLOCK_RU)) line = line.split(`«${title}»`).join(" ");
  // The user's own dates and quoted names are theirs to be restated; anything else in digits or quotes is not.
  line = line.replace(NAME, (m) => (words.names.has(bareName(m)) ? ` ${SAID} ` : m));
  line = line.replace(DATE, (m) => (words.dates.has(m) ? ` ${SAID} ` : m));
  const bad = line.match(/[^\p{L}\s,.!?:;—–-]/gu);
  if (bad) {
    const figures = [...new Set([...line.matchAll(FIGURE)].map((m) => m[0].trim()))];
    return [
      `символы вне связующего текста: ${[...new Set(bad)].join(" ")}`,
      ...(figures.length ? [`цифры вне меню утверждений: ${figures.map((f) => `«${f}»`).join(", ")}`] : []),
    ];
  }
  const tokens = [...line.matchAll(TOKEN)].map((m) => m[0].trim());
  // A negated verb of doing, when a tool failed: «не» right before or after it (one word between at most).
  const notDone = (k: number) =>
    faulted &&
    [k - 2, k - 1, k + 1, k + 2].some((j) => {
      const [a, b] = tokens[k]!.toLowerCase() === "не" ? [k, j] : [j, k];
      return (
        tokens[a]?.toLowerCase() === "не" &&
        readings(tokens[b] ?? "").some((r) => NOT_DONE.has(r.lemma) && PREDICATE_POS.has(r.pos))
      );
    });
  const parsed = tokens.map((w, k) => (/^\p{L}/u.test(w) ? classify(w, words, notDone(k)) : null));
  const outside = [
    ...new Set(
      parsed.filter((w) => w && (w.kind === "outside" || w.kind === "operator")).map((w) => w!.text.toLowerCase()),
    ),
  ];
  if (outside.length)
    return [
      `слова вне закрытого словаря: ${outside
        .slice(0, 6)
        .map((w) => `«${w}»`)
        .join(", ")}`,
    ];
  // A predicate of the line's own: a courtesy verb, or a dash after something other than a pointer.
  let pointerOnly = true;
  let predicate = false;
  for (const [k, w] of parsed.entries()) {
    const tok = tokens[k]!;
    if (/^[—–-]$/.test(tok) && !pointerOnly) predicate = true;
    if (/^[,.!?:;]$/.test(tok)) pointerOnly = true;
    if (w?.predicate) predicate = true;
    if (w && w.kind === "said") pointerOnly = false;
  }
  if (!predicate) return [];
  // With a predicate, the user's and topic words stand only where nothing is said of them: in an adjunct a
  // preposition opens («вопросы по расчётам»), after a verb of asking («уточнить дату»), or in a condition
  // («если нужна другая дата») — never as what the predicate says something about («Проверка показала долги»).
  const loose: string[] = [];
  let adjunct = false;
  let condition = false;
  for (const [k, w] of parsed.entries()) {
    if (!w) {
      adjunct = condition = false;
      continue;
    }
    if (w.text.toLowerCase() === "если") condition = true;
    if (w.preposition || w.asking) adjunct = true;
    else if (w.predicate || (w.kind === "function" && /^(и|а|но|что|как|чтобы)$/i.test(w.text))) adjunct = false;
    else if (w.kind === "said" && !adjunct && !condition)
      loose.push(w.text === SAID ? "дата или название" : tokens[k]!);
  }
  return loose.length
    ? [`сказано о словах вопроса, а не при них: ${[...new Set(loose)].map((w) => `«${w.toLowerCase()}»`).join(", ")}`]
    : [];
}
