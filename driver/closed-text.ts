// Closed-world answer text. The model may only select and order facts and write connective text:
// every factual token of a shown answer (a figure, a date, a month, a name, a sign or direction, a
// quantifier or conclusion) is a slot — `{F3.amount}`, `{F3}`, `{K0}` — that the engine renders
// from the system's artifacts. Outside slots, every word must belong to a small closed vocabulary
// of connective words; a digit or any other word refuses the sentence. Why closed: a checker that
// parses open prose recognises only the lies it was shown, and each new phrasing of a lie («сто
// двадцать тысяч», «по всей видимости, все оплачены», a name without its legal form) passes it.
// Here an unknown word is refused, not parsed, so a new phrasing is refused too. System-independent:
// a system supplies how its slots resolve and which headings its answers use.

/** One `{REF}` or `{REF.field}` written by the model. */
export interface Slot {
  /** `F3`, `K0`, `S2`: a letter prefix and a number. */
  ref: string;
  field: string | null;
  /** The slot as written, braces included. */
  raw: string;
  at: number;
}

/** What a slot renders to, or why it cannot be rendered. */
export type SlotValue =
  | {
      ok: true;
      text: string;
      /** Fact ids the rendered text states (its citations). */
      facts: string[];
    }
  | { ok: false; issue: string };

export interface ClosedTextRules {
  /** Renders one slot from the run's artifacts. */
  resolve(slot: Slot): SlotValue;
  /** Exact headings the answer format has (`**Коротко.**`); stripped before the vocabulary check. */
  headings?: readonly string[];
  /** Words a system adds to the shared connective vocabulary (lower case, «ё» as «е»). */
  extraWords?: readonly string[];
  /**
   * Checks that only the whole sentence shows, on its parsed slots (e.g. "field slots of one
   * sentence belong to one fact"). Returns issues.
   */
  sentence?(slots: Slot[], values: SlotValue[]): string[];
}

const SLOT = /\{([A-Z]{1,2}\d{1,4})(?:\.([a-z_]{1,24}))?\}/g;
// Braces that do not form a well-formed slot are not text a user should see.
const STRAY_BRACE = /[{}]/;
const CITATION = /\[(F\d{1,4})\]/g;

/**
 * The connective vocabulary: prepositions, conjunctions, pronouns, neutral nouns and verbs. It
 * deliberately holds no number word, month, name, negation («не», «нет», «ни»), quantifier («все»,
 * «только», «никаких»), hedge («вероятно», «видимо»), sign or direction («долг», «должны», «мы»,
 * «аванс», «остаток») and no role («поставщик», «покупатель»): each of those says something about
 * the world and so must come from a slot.
 */
export const CONNECTIVE_WORDS: ReadonlySet<string> = new Set(
  [
    // prepositions
    "в во на по у с со к ко от до из за для о об обо при перед между через после среди согласно",
    // conjunctions and particles
    "и а но или либо также тоже что чтобы как если когда где то так же ли именно ещё еще кроме того при этом",
    "итак поэтому далее затем отдельно однако причем причём а также то есть в том числе обратите внимание отметим",
    // pronouns (not «мы/нам/наш»: who owes whom is a direction)
    "это этот эта эти этого этой этому этим этих этом эту он она оно они его ее её их ему ей им ним нему ней нее него",
    "который которая которое которые которого которой которому которым которых котором которую которыми",
    "вы вам вас ваш ваша ваше ваши вашего вашей вашему вашим ваших",
    // neutral nouns of the answer format
    "данные данных данным данными ответ ответа ответе ответу вопрос вопроса вопросу вопросе",
    "источник источника источники источников источнику факт факта факты фактов фактам фактами факте",
    "сумма суммы сумме сумму суммой дата даты дате дату датой документ документа документу документом документе",
    "документы документов документам контрагент контрагента контрагенту контрагентом контрагенте",
    "договор договора договору договором договоре регистр регистра регистре регистру учет учета учету учете",
    "проверка проверки проверке проверку подробности основание основании ссылка ссылке ссылки",
    // neutral verbs and participles
    "составляет составил составила составило составили указан указана указано указаны отражен отражена отражено",
    "отражены числится числятся значится относится относятся следует видно подтверждает подтверждают",
    "подтверждается подтверждаются есть является являются приведен приведена приведено приведены",
    "ниже выше см смотрите подробнее следующий следующее следующие такой такая такое такие",
  ]
    .join(" ")
    .split(/\s+/)
    .filter(Boolean),
);

/** The slots written in a sentence, in order. */
export function parseSlots(sentence: string): Slot[] {
  return [...sentence.matchAll(SLOT)].map((m) => ({ ref: m[1]!, field: m[2] ?? null, raw: m[0], at: m.index! }));
}

const norm = (w: string) => w.toLowerCase().replace(/ё/g, "е");

/** What the closed vocabulary judges: the sentence without slots, citations and the format's headings. */
function connectiveText(sentence: string, headings: readonly string[]): string {
  let s = sentence.replace(SLOT, " ").replace(CITATION, " ");
  for (const h of headings) s = s.split(h).join(" ");
  return s;
}

export interface SentenceVerdict {
  issues: string[];
  /** The sentence as the user sees it: slots rendered, citations of the facts it states appended. */
  rendered: string;
  /** Fact ids the rendered sentence states. */
  facts: string[];
}

/** Judges and renders one sentence under the closed-world rules. */
export function judgeSentence(sentence: string, rules: ClosedTextRules): SentenceVerdict {
  const issues: string[] = [];
  const slots = parseSlots(sentence);
  const values = slots.map((s) => rules.resolve(s));
  values.forEach((v, k) => {
    if (!v.ok) issues.push(`${slots[k]!.raw}: ${v.issue}`);
  });
  const extra = new Set((rules.extraWords ?? []).map(norm));
  const text = connectiveText(sentence, rules.headings ?? []);
  if (STRAY_BRACE.test(text)) issues.push("слот записан с ошибкой: фигурные скобки вне слота");
  // The refusal names the figure, so the report says which amount was invented, not only that one was.
  const figures = !/\p{Nd}/u.test(text)
    ? []
    : [...text.matchAll(/\p{Nd}(?:[\p{Nd}\s\u00a0.,]*\p{Nd})?(?:\s?(?:₽|руб(?:\.|л\p{L}*)?|р\.|%))?/gu)].map((m) =>
        m[0].trim(),
      );
  if (figures.length)
    issues.push(
      `цифры вне слота: ${[...new Set(figures)]
        .slice(0, 3)
        .map((f) => `«${f}»`)
        .join(", ")} — числа, суммы и даты подставляются только из фактов`,
    );
  const outside = [...new Set([...text.matchAll(/\p{L}+/gu)].map((m) => norm(m[0])))].filter(
    (w) => !CONNECTIVE_WORDS.has(w) && !extra.has(w),
  );
  if (outside.length)
    issues.push(
      `слова вне слотов: ${outside
        .slice(0, 5)
        .map((w) => `«${w}»`)
        .join(", ")} — утверждения о данных подставляются только из фактов`,
    );
  const facts = [...new Set(values.flatMap((v) => (v.ok ? v.facts : [])))];
  // A citation the model wrote must point at a fact this sentence states.
  for (const m of sentence.matchAll(CITATION))
    if (!facts.includes(m[1]!)) issues.push(`ссылка [${m[1]}] не относится к фактам этого предложения`);
  if (!issues.length && rules.sentence) issues.push(...rules.sentence(slots, values));
  if (issues.length) return { issues: [...new Set(issues)], rendered: "", facts };
  return { issues: [], rendered: render(sentence, slots, values), facts };
}

/** Slots replaced by their text; the facts stated by field slots cited once, at the sentence's end. */
function render(sentence: string, slots: Slot[], values: SlotValue[]): string {
  let out = "";
  let from = 0;
  const cited = new Set<string>();
  const needCite = new Set<string>();
  slots.forEach((s, k) => {
    const v = values[k] as Extract<SlotValue, { ok: true }>;
    out += sentence.slice(from, s.at) + v.text;
    from = s.at + s.raw.length;
    // a whole statement carries its citations in its text; a field does not
    for (const f of v.facts) (s.field ? needCite : cited).add(f);
  });
  out += sentence.slice(from);
  for (const m of sentence.matchAll(CITATION)) cited.add(m[1]!);
  const missing = [...needCite].filter((f) => !cited.has(f));
  if (!missing.length) return out;
  const cites = missing.map((f) => `[${f}]`).join("");
  // before the sentence's closing punctuation and line break: «… 150 000 ₽ [F3].\n»
  const m = /([.!?…:;]*)(\s*)$/.exec(out)!;
  return `${out.slice(0, m.index).trimEnd()} ${cites}${m[1]}${m[2]}`;
}
