// The closed Russian vocabulary the deterministic parser understands. Every word is stored folded
// (lower case, ё→е) because matching always runs on folded text.
import type { DocumentType } from "./types";

export type CommandKind = "find" | "inspect" | "explain" | "list" | "mutate";

const COMMANDS: Record<CommandKind, string[]> = {
  find: [
    "найди",
    "найдите",
    "найти",
    "найдем",
    "поищи",
    "поищите",
    "ищи",
    "ищите",
    "отыщи",
    "отыщите",
    "разыщи",
    "где",
  ],
  inspect: [
    "покажи",
    "покажите",
    "показать",
    "открой",
    "откройте",
    "опиши",
    "опишите",
    "выведи",
    "выведите",
    "отобрази",
    "отобразите",
    "проверь",
    "посмотри",
    "посмотрите",
  ],
  explain: [
    "объясни",
    "объясните",
    "объяснить",
    "поясни",
    "поясните",
    "расскажи",
    "расскажите",
    "подскажи",
    "подскажите",
  ],
  list: ["перечисли", "перечислите", "перечислить", "список", "перечень"],
  mutate: [
    "удали",
    "удалите",
    "удалить",
    "создай",
    "создайте",
    "создать",
    "измени",
    "измените",
    "изменить",
    "переименуй",
    "переименуйте",
    "перенеси",
    "перенесите",
    "перемести",
    "переместите",
    "добавь",
    "добавьте",
    "исправь",
    "исправьте",
    "сохрани",
    "опубликуй",
    "опубликуйте",
    "замени",
    "замените",
  ],
};

const COMMAND_INDEX = new Map<string, CommandKind>();
for (const [kind, ws] of Object.entries(COMMANDS) as [CommandKind, string[]][]) {
  for (const w of ws) COMMAND_INDEX.set(w, kind);
}

export function commandOf(word: string): CommandKind | undefined {
  return COMMAND_INDEX.get(word);
}

/** Question openers that signal an implicit intent (no command verb). */
export const QUESTION_WORDS = new Set([
  "как",
  "что",
  "зачем",
  "почему",
  "можно",
  "какие",
  "какой",
  "какая",
  "какую",
  "каким",
  "сколько",
  "чем",
  "когда",
  "где",
  "куда",
  "откуда",
  "ли",
]);

// Case forms (singular and plural) of the type nouns. Generated from stem + endings so the table
// stays readable; "документ" deliberately maps to no type (any document).
function forms(stem: string, endings: string[]): string[] {
  return endings.map((e) => stem + e);
}
const FEM_IYA = ["ия", "ии", "ию", "ией", "ий", "иям", "иями", "иях"];
const FEM_A = ["а", "ы", "е", "у", "ой", "ам", "ами", "ах", ""];
const FEM_SOFT = ["ь", "и", "ью", "ей", "ям", "ями", "ях"];
const MASC = ["", "а", "у", "ом", "е", "ы", "ов", "ам", "ами", "ах"];

const TYPE_FORMS: Record<string, string[]> = {
  Folder: [...forms("папк", ["а", "и", "е", "у", "ой", "ам", "ами", "ах"]), "папок"],
  Composition: forms("композиц", FEM_IYA),
  Entity: forms("сущност", FEM_SOFT),
  Form: forms("форм", FEM_A),
  Report: forms("отчет", MASC),
  Process: forms("процесс", MASC),
};

const PLURAL_ENDINGS = /(?:ии|ий|иям|иями|иях|ы|ов|ей|ах|ами|ам|ях|ями|ям|и|ок)$/;

const TYPE_INDEX = new Map<string, string>();
for (const [type, fs] of Object.entries(TYPE_FORMS)) for (const f of fs) TYPE_INDEX.set(f, type);

/** The document type a folded word names, if any ("композицию" → Composition). */
export function typeOf(word: string): string | undefined {
  return TYPE_INDEX.get(word);
}

/** A type noun used in a plural-looking form ("композиции", "отчетов") — a hint for list intents. */
export function looksPlural(word: string): boolean {
  return PLURAL_ENDINGS.test(word);
}

export const SUPPORTED_TYPES: readonly DocumentType[] = ["Folder", "Composition", "Entity", "Form", "Report"];

/** Russian names of the types for user-facing text and for the descriptive reply resolver. */
export const TYPE_LABELS: Record<string, { one: string; acc: string; many: string; gender: "f" | "m" | "n" }> = {
  Folder: { one: "папка", acc: "папку", many: "папки", gender: "f" },
  Composition: { one: "композиция", acc: "композицию", many: "композиции", gender: "f" },
  Entity: { one: "сущность", acc: "сущность", many: "сущности", gender: "f" },
  Form: { one: "форма", acc: "форму", many: "формы", gender: "f" },
  Report: { one: "отчёт", acc: "отчёт", many: "отчёты", gender: "m" },
  Process: { one: "процесс", acc: "процесс", many: "процессы", gender: "m" },
};

/** Pronouns that point back at something already named; gender narrows the referent. */
export const PRONOUNS: Record<string, "f" | "m" | "n" | "pl" | "any"> = {
  она: "f",
  ее: "f",
  ей: "f",
  ней: "f",
  нее: "f",
  нею: "f",
  он: "m",
  его: "any",
  него: "any",
  ему: "any",
  нему: "any",
  нем: "any",
  им: "any",
  ним: "any",
  оно: "n",
  они: "pl",
  их: "pl",
  них: "pl",
  ими: "pl",
  ними: "pl",
};

export const DEMONSTRATIVES = new Set([
  "эта",
  "эту",
  "этой",
  "этот",
  "этого",
  "этом",
  "этому",
  "это",
  "эти",
  "этих",
  "этим",
  "этими",
  "та",
  "ту",
  "тот",
  "того",
  "той",
  "том",
]);

/** Words that point at the previous turn ("предыдущая", "прошлый", "последний найденный"). */
export const PREVIOUS_RE = /^(?:предыдущ|прошл|вышеуказанн|упомянут|найденн|тот же|та же)/;

/**
 * Filler words dropped from an unquoted mention ("покажи мне, пожалуйста, описание композиции X"
 * → "X"). Prepositions are kept out of this list on purpose: they are stripped only at the edges.
 */
export const FILLERS = new Set([
  "мне",
  "нам",
  "пожалуйста",
  "плиз",
  "все",
  "всех",
  "весь",
  "всю",
  "вся",
  "описание",
  "описания",
  "подробности",
  "подробнее",
  "информацию",
  "информация",
  "инфо",
  "детали",
  "содержимое",
  "содержание",
  "свойства",
  "поля",
  "документ",
  "документа",
  "документы",
  "документов",
  "документу",
  "а",
  "ну",
  "же",
  "ка",
  "еще",
  "какие",
  "какая",
  "какой",
  "есть",
  "существуют",
  "имеются",
  "лежат",
  "лежит",
  "находится",
  "находятся",
  "называется",
  "под",
  "названием",
  "именем",
  "с",
  "со",
  "про",
  "о",
  "об",
  "обо",
  "по",
  "для",
  "в",
  "во",
  "из",
  "и",
  "это",
  "такое",
  "что",
  "там",
  "тут",
  "здесь",
  "сейчас",
  "можешь",
  "можете",
  "мог",
  "бы",
  "ли",
  // repetition: «покажи этот отчёт ещё раз / снова» asks again, it names nothing
  "снова",
  "опять",
  "заново",
  "повторно",
  "разок",
  "вновь",
]);

export const EDGE_PREPOSITIONS = new Set([
  "в",
  "во",
  "из",
  "на",
  "о",
  "об",
  "обо",
  "про",
  "по",
  "для",
  "с",
  "со",
  "к",
  "ко",
  "у",
]);

/** Clause delimiters in priority order; ", и" splits only before a new command (see plan.ts). */
export const DELIMITERS = ["после этого", "после чего", "затем", "потом", "а также"];

export const CANCEL_WORDS = new Set([
  "отмена",
  "отмени",
  "отменить",
  "отмените",
  "стоп",
  "хватит",
  "неважно",
  "не надо",
  "забудь",
  "забудьте",
  "отбой",
  "cancel",
]);
