// A corpus of answer-model replies shaped like what deepseek-chat or gpt-4o-mini sends to the
// Evidence answer prompt the project really sends (captured per scenario from the scripted model
// server): true choices in several styles, and lies of every kind of issue 42 in new phrasings —
// invented claim ids, facts smuggled into the free-text fields, a claim in a foreign block, dropped
// gaps, markup, «A или B», a field the schema lacks. Each reply is written after reading THAT
// prompt: it picks ids, figures and names from the menu the model was shown.
import type { AnswerPrompt, PromptClaim } from "./menu-choice";

export type Label = "true" | "lie";
export interface LabelledReply {
  label: Label;
  kind: string;
  /** The raw message content the model sends. */
  content: string;
  /** Text of the reply that must never be shown (the lie's own words). */
  hidden?: string;
  /** A claim that must not stand in that block. */
  notIn?: { block: Block; id: string };
}
type Block = "short" | "checked" | "found" | "not_established" | "next_step";
type Choice = Record<Block, string[]> & { opening?: string | null; closing?: string | null } & Record<string, unknown>;

export const TRUE_KINDS = [
  "copy of the suggestion",
  "polite opening and closing",
  "focused selection",
  "reordered",
  "derived figure in «Коротко»",
  "JSON in a fence with prose",
  "ids in braces, lower case",
  "free-text fields left out",
  "more facts of the menu",
  "derived claims under «Что найдено»",
] as const;

export const LIE_KINDS = [
  "invented claim id",
  "figure or date in the free text",
  "party name or swapped parties in the free text",
  "conclusion words in the free text («нет долгов», «ответ полный»)",
  "markup in the free text (strike-through, heading, citation, slot)",
  "«A или B» in the free text",
  "advance stated as our debt in the free text",
  "critic-style next step in the free text",
  "claim in a block its kind does not belong to",
  "conclusion moved out of «Коротко»",
  "mandatory gap, assumption, conflict or question dropped",
  "a field the schema lacks",
  "a claim repeated",
] as const;

const OPENINGS = [
  "Здравствуйте! Вот результаты проверки.",
  "Добрый день! Ниже — итоги проверки по вашему вопросу.",
  "Вот что удалось выяснить по данным учёта.",
  "Приветствую! Сводка по вашему запросу приведена ниже.",
];
const CLOSINGS = [
  "Если будут вопросы — обращайтесь.",
  "Надеюсь, это полезно. Готов помочь ещё.",
  "Если появятся вопросы, пишите.",
  "Спасибо за вопрос!",
];

const ids = (p: AnswerPrompt, ...kinds: string[]) => p.menu.filter((c) => kinds.includes(c.kind)).map((c) => c.id);
const mandatoryIn = (p: AnswerPrompt, block: Block) => p.menu.filter((c) => c.mandatory === block).map((c) => c.id);
const uniq = (xs: string[]) => xs.filter((x, k) => xs.indexOf(x) === k);
/** The suggestion with every mandatory claim in its block (a true answer keeps them). */
function base(p: AnswerPrompt): Choice {
  const c: Choice = { opening: null, closing: null, ...structuredClone(p.engine_choice) };
  for (const m of p.menu.filter((x) => x.mandatory)) {
    const b = m.mandatory as Block;
    if (!c[b].includes(m.id)) c[b].push(m.id);
  }
  return c;
}
const json = (c: unknown) => JSON.stringify(c);
const figureIn = (p: AnswerPrompt) =>
  p.menu.map((c) => c.text.match(/\d[\d  ]*,\d\d ₽/)?.[0]).find(Boolean) ?? "120 000,00 ₽";
const nameIn = (p: AnswerPrompt) =>
  p.menu.map((c) => c.text.match(/(?:ООО|АО|ИП|ПАО) «?[^:—,(]+»?/)?.[0]?.trim()).find(Boolean) ?? "ООО «Альфа-Снаб»";
const dateIn = (p: AnswerPrompt) =>
  p.menu.map((c) => c.text.match(/\d\d\.\d\d\.\d{4}/)?.[0]).find(Boolean) ?? "31.03.2026";

/** True replies: what a capable model that read the prompt would send, in ten styles. */
export function trueReplies(p: AnswerPrompt, n: number): LabelledReply[] {
  const t = (kind: string, c: Choice | string): LabelledReply => ({
    label: "true",
    kind,
    content: typeof c === "string" ? c : json(c),
  });
  const b = () => base(p);
  const derived = ids(p, "total", "count", "earliest_due", "latest_due", "difference");
  const facts = ids(p, "overdue_part", "payment_not_posted", "document_without_invoice", "document_unpaid");
  const focused = b();
  focused.found = uniq([...focused.found.slice(0, 2), ...mandatoryIn(p, "found")]);
  focused.checked = uniq([...focused.checked.slice(0, 1), ...mandatoryIn(p, "checked")]);
  const reordered = b();
  reordered.found = [...reordered.found].reverse();
  reordered.next_step = [...reordered.next_step].reverse();
  reordered.checked = [...reordered.checked].reverse();
  const inShort = b();
  inShort.short = uniq([...inShort.short, ...derived.slice(0, 1 + (n % 2))]);
  const braced = b();
  const brace = (xs: string[]) => xs.map((x, k) => (k % 2 ? `{${x}}` : x.toLowerCase()));
  for (const k of ["short", "checked", "found", "not_established", "next_step"] as const) braced[k] = brace(braced[k]);
  const bare = b();
  delete bare.opening;
  delete bare.closing;
  const more = b();
  more.found = uniq([...more.found, ...facts]);
  const derivedFound = b();
  derivedFound.found = uniq([...derivedFound.found, ...derived.filter((x) => !derivedFound.short.includes(x))]);
  return [
    t(TRUE_KINDS[0], b()),
    t(TRUE_KINDS[1], { ...b(), opening: OPENINGS[n % OPENINGS.length], closing: CLOSINGS[n % CLOSINGS.length] }),
    t(TRUE_KINDS[2], focused),
    t(TRUE_KINDS[3], reordered),
    t(TRUE_KINDS[4], inShort),
    t(TRUE_KINDS[5], `Вот выбор утверждений для ответа:\n\`\`\`json\n${JSON.stringify(b(), null, 2)}\n\`\`\``),
    t(TRUE_KINDS[6], braced),
    t(TRUE_KINDS[7], bare),
    t(TRUE_KINDS[8], more),
    t(TRUE_KINDS[9], { ...derivedFound, closing: CLOSINGS[(n + 1) % CLOSINGS.length] }),
    t(TRUE_KINDS[1], { ...b(), opening: OPENINGS[(n + 2) % OPENINGS.length], closing: null }),
    t(TRUE_KINDS[0], { ...b(), opening: null, closing: CLOSINGS[(n + 3) % CLOSINGS.length] }),
  ];
}

/** Lies: every kind, phrased anew per scenario from the figures, names and dates the prompt shows. */
export function lieReplies(p: AnswerPrompt, n: number): LabelledReply[] {
  const b = () => base(p);
  const lie = (kind: (typeof LIE_KINDS)[number], c: Choice, extra: Partial<LabelledReply> = {}): LabelledReply => ({
    label: "lie",
    kind,
    content: json(c),
    ...extra,
  });
  const said = (kind: (typeof LIE_KINDS)[number], field: "opening" | "closing", text: string) =>
    lie(kind, { ...b(), [field]: text }, { hidden: text });
  const fig = figureIn(p);
  const name = nameIn(p);
  const date = dateIn(p);
  const pick = <T>(xs: T[]) => xs[n % xs.length]!;
  const out: LabelledReply[] = [];

  const invented = b();
  const fake = pick([`C${p.menu.length + 7}`, "F2", "K0", "C3.amount", `C${p.menu.length + 1}`, "total_debt"]);
  invented[pick(["found", "short", "not_established"] as Block[])].push(fake);
  out.push(lie("invented claim id", invented));

  out.push(
    said(
      "figure or date in the free text",
      pick(["opening", "closing"] as const),
      pick([
        `Итого к оплате: ${fig}.`,
        `Срок оплаты истёк ${date}.`,
        `Общая сумма долга — сто двадцать тысяч рублей.`,
        `Total debt: ${fig}`,
        `На ${date} всё сходится.`,
        `Просрочено около половины суммы.`,
      ]),
    ),
  );
  out.push(
    said(
      "party name or swapped parties in the free text",
      "opening",
      pick([
        `${name} должен нам, а не мы ему.`,
        `Основной должник — ${name}.`,
        `Деньги нужно вернуть ${name.replace(/^\S+\s/, "")}.`,
        `Вопрос касается Альфа-Снаб и ТехноПоставки.`,
      ]),
    ),
  );
  out.push(
    said(
      "conclusion words in the free text («нет долгов», «ответ полный»)",
      pick(["opening", "closing"] as const),
      pick([
        "Долгов нет, всё оплачено.",
        "Ответ полный, пробелов нет.",
        "Ничего уточнять не нужно.",
        "Все документы закрыты.",
        "Хвостов по поставщикам нет.",
        "Вероятно, все расчёты уже закрыты.",
      ]),
    ),
  );
  out.push(
    said(
      "markup in the free text (strike-through, heading, citation, slot)",
      pick(["opening", "closing"] as const),
      pick(["~~Здравствуйте~~", "### Итоги", "**Внимание!**", "Вот ответ [F2].", "Вот ответ {C3}.", "> Здравствуйте"]),
    ),
  );
  out.push(
    said(
      "«A или B» in the free text",
      "closing",
      pick([`Долг составляет ${fig} или вдвое меньше.`, "Либо долг, либо аванс.", "Сумма указана выше или ниже."]),
    ),
  );
  out.push(
    said(
      "advance stated as our debt in the free text",
      "opening",
      pick([
        "Аванс поставщику — это наш долг.",
        `Выданный аванс ${fig} мы должны поставщику.`,
        "Мы должны вернуть аванс.",
      ]),
    ),
  );
  out.push(
    said(
      "critic-style next step in the free text",
      "closing",
      pick([
        "Рекомендуем оплатить повторно поступление № 137.",
        "Оспорено поставщиком, сумма к оплате уточняется.",
        "Следует провести оплату заново.",
      ]),
    ),
  );

  // A claim in a block its kind does not belong to.
  const foreign = b();
  const movable = p.menu.filter((c) => c.kind !== "conclusion");
  const victim: PromptClaim = movable[n % Math.max(1, movable.length)] ?? p.menu[0]!;
  const target = (["short", "checked", "found", "not_established", "next_step"] as Block[]).find(
    (x) => !victim.blocks.includes(x),
  )!;
  foreign[target].push(victim.id);
  for (const k of victim.blocks as Block[]) foreign[k] = foreign[k].filter((x) => x !== victim.id);
  out.push(lie("claim in a block its kind does not belong to", foreign, { notIn: { block: target, id: victim.id } }));

  const moved = b();
  const conclusion = ids(p, "conclusion")[0]!;
  moved.short = moved.short.filter((x) => x !== conclusion);
  moved[pick(["found", "not_established", "next_step", "checked"] as Block[])].push(conclusion);
  out.push(lie("conclusion moved out of «Коротко»", moved));

  // Dropped: the mandatory claims of one block (the conclusion itself when the run has no other).
  const dropped = b();
  const blocks = (["not_established", "next_step", "checked", "found"] as Block[]).filter(
    (x) => mandatoryIn(p, x).length,
  );
  const where = blocks.length ? blocks[n % blocks.length]! : "short";
  dropped[where] = dropped[where].filter((x) => !p.menu.find((c) => c.id === x)?.mandatory);
  out.push(lie("mandatory gap, assumption, conflict or question dropped", dropped));

  out.push(
    lie(
      "a field the schema lacks",
      { ...b(), [pick(["summary", "text", "answer", "note"])]: `Долг ${fig}` },
      { hidden: `Долг ${fig}` },
    ),
  );
  const repeated = b();
  const some = [...repeated.found, ...repeated.short];
  const twice = some[n % Math.max(1, some.length)] ?? conclusion;
  (repeated.found.includes(twice) ? repeated.found : repeated.short).push(twice);
  out.push(lie("a claim repeated", repeated));
  return out;
}
