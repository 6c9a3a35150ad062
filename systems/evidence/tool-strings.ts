// Strings from tool data are data (seed 002 §6.2: the model is never a source of facts, and a
// tool is never a source of instructions). A counterparty's name or a document's number comes
// from the accounting base, and whatever is planted there — an instruction, markup, a link, a
// slot of the answer contract — must not be repeated to the user or fed to a model as text.
// The rule is the shape of the value, not a list of bad sentences: a name is a short run of
// words, optionally a legal form and a quoted name; anything with sentence structure, markup,
// brackets, a link, control characters, an imperative or an implausible length is not a name.
// A flagged value is rendered as a neutral placeholder with the id; the raw value stays in the
// tool run (the engineering trace), with a reason code.

/** The step type of the engine's own name check (plan-rules.ts withNameCheck): a directory read, not a binding of the user's words. */
export const NAME_CHECK = "verify_counterparty_names";

/** Why a string from tool data was not shown. */
export const TOOL_STRING_FLAGS = [
  "markup", // brackets, braces, angle brackets, Markdown or code characters, line breaks, control characters
  "link", // a URL, a domain or an e-mail address
  "length", // longer than any name or number is
  "sentence", // sentence structure: a full stop, colon or dash followed by more words
  "instruction", // an imperative or words addressed to a model
  "directory_mismatch", // differs from the directory's entry for the same id
] as const;
export type ToolStringFlag = (typeof TOOL_STRING_FLAGS)[number];

/** One string from tool data that was not shown, for the trace and the coverage report. */
export interface FlaggedString {
  tool: string;
  step_id: string;
  field: string;
  id: string | null;
  reason: ToolStringFlag;
}

const MAX_NAME_CHARS = 120;
const MAX_NAME_WORDS = 10;
const MAX_CODE_CHARS = 40;

const LEGAL_FORM =
  /^(?:ООО|АО|ПАО|ЗАО|ОАО|НАО|ИП|ГУП|МУП|ФГУП|НКО|АНО|ТОО|LLC|Ltd\.?|Inc\.?|GmbH|Общество с ограниченной ответственностью|(?:Публичное |Закрытое |Открытое )?[Аа]кционерное общество|Индивидуальный предприниматель)\s+/u;
// Control and format characters, line breaks, and the characters of markup, code and slots.
const MARKUP = /[\p{Cc}\p{Cf}\u2028\u2029[\]{}<>|\\`*_#~=^$]/u;
const LINK = /(?:[a-z][a-z0-9+.-]*:\/\/|www\.|@|\.(?:ru|com|net|org|io|info|рф|su|me|ai)(?![\p{L}\d]))/iu;
// A full stop, «!», «?», «;» or «:» followed by more words is a sentence, unless the full stop ends
// an initial («Смирнов А. В.») or a short abbreviation («т. д.»); a spaced dash starts a clause.
const SENTENCE = /(?:[!?;:…]|(?<![\p{Lu}]|(?<![\p{L}])\p{Ll}{1,2})\.)\s*[\p{L}\d]|\s[—–-]\s+\p{Ll}|[!?]\s*$/u;
// Words addressed to a model, in Russian and English: a name never speaks to the reader.
const ADDRESSED =
  /(?<![\p{L}])(?:ignore|disregard|instruction|prompt|system|assistant|override|jailbreak|answer|respond|pretend|инструкц|промпт|системн|игнорир|забуд|ассистент|нейросет|языков\p{L}*\s+модел|ответь|отвечай|напиши|пиши|сообщи|скажи|выведи|считай|укажи|не\s+упоминай|оплати)/iu;
// Lowercase words shaped like an imperative (-уй, -ывай, -йте, -ите, -ьте) inside what should be a
// name, and a negated verb phrase («не показывай»): a name names, it does not tell.
const IMPERATIVE = /(?<![\p{L}])(?:\p{Ll}{2,}(?:уй|юй|ывай|ивай|йте|ите|ьте)|не\s+\p{Ll}{3,})(?![\p{L}])/u;
// More lowercase words than a name has: running text, not a name.
const MAX_LOWER_WORDS = 4;
const SMALL = new Set(["и", "с", "на", "по", "для", "в", "во", "из", "от", "при", "and", "of", "the", "&"]);

/** Why a name (a counterparty's, a document kind's) is not shown; null when it looks like a name. */
export function nameFlag(value: string): ToolStringFlag | null {
  const v = value.trim();
  if (!v) return "length";
  if (MARKUP.test(v)) return "markup";
  if (LINK.test(v)) return "link";
  if (v.length > MAX_NAME_CHARS) return "length";
  const bare = v.replace(LEGAL_FORM, "").replace(/[«»"“”„']/g, " ");
  const words = bare.split(/\s+/).filter(Boolean);
  if (words.length > MAX_NAME_WORDS) return "length";
  if (ADDRESSED.test(bare) || IMPERATIVE.test(bare)) return "instruction";
  if (SENTENCE.test(bare)) return "sentence";
  if (words.filter((w) => /^\p{Ll}/u.test(w) && !SMALL.has(w)).length >= MAX_LOWER_WORDS) return "sentence";
  // Quotes must pair: a name that closes a quote and goes on is text around a name.
  const open = (v.match(/«/g) ?? []).length;
  const close = (v.match(/»/g) ?? []).length;
  if (open !== close) return "sentence";
  if (close && !/»+$/.test(v) && !/^ИП\s/u.test(v)) return "sentence";
  return null;
}

/** Why a short code (a document or contract number) is not shown; null when it looks like one. */
export function codeFlag(value: string): ToolStringFlag | null {
  const v = value.trim();
  if (!v || v.length > MAX_CODE_CHARS) return "length";
  // An underscore is a code's own character («invoice_received»), not emphasis.
  if (MARKUP.test(v.replace(/(?<=[\p{L}\d])_(?=[\p{L}\d])/gu, ""))) return "markup";
  if (LINK.test(v)) return "link";
  if (!/^[\p{L}\p{Nd}][\p{L}\p{Nd}/.\-–_ ]*$/u.test(v) || v.split(/\s+/).length > 3) return "sentence";
  return null;
}

/** An id is shown only when it is a plain identifier; otherwise nothing of it is. */
const safeId = (id: string | null | undefined) => (id && /^[\p{L}\d][\p{L}\d_.:-]{0,40}$/u.test(id) ? id : null);

/** What the user sees in place of a flagged name. */
export function namePlaceholder(id: string | null | undefined): string {
  const s = safeId(id);
  return s
    ? `контрагент с кодом ${s} (название в данных учёта не прошло проверку)`
    : "контрагент (название в данных учёта не прошло проверку)";
}

/** What the user sees in place of a flagged number. */
export const CODE_PLACEHOLDER = "(номер не прошёл проверку)";

/** Whether a string shown to the user is one of the placeholders (a renderer need not quote it). */
export const isPlaceholder = (s: string) => /не прошло? проверку\)$/.test(s);

/**
 * A name from tool data, as it may be shown: the directory's entry for the id when the tool's
 * value differs from it, the value itself when it looks like a name, else a placeholder.
 */
export function displayName(
  value: string,
  id: string | null | undefined,
  directory?: ReadonlyMap<string, string>,
): { text: string; flag: ToolStringFlag | null } {
  const own = nameFlag(value);
  const entry = id ? directory?.get(id) : undefined;
  if (entry !== undefined && entry !== value) {
    // The directory is the reference for a party's name; a register row that says otherwise is flagged.
    return nameFlag(entry)
      ? { text: namePlaceholder(id), flag: own ?? "directory_mismatch" }
      : { text: entry, flag: "directory_mismatch" };
  }
  return own ? { text: namePlaceholder(id), flag: own } : { text: value, flag: null };
}

/** What the user sees in place of a flagged document title. */
export const TITLE_PLACEHOLDER = "документ (название вида в данных учёта не прошло проверку)";

/** A document's title (its kind, «Поступление товаров и услуг») from tool data, as it may be shown. */
export function displayTitle(value: string): { text: string; flag: ToolStringFlag | null } {
  const flag = nameFlag(value);
  return flag ? { text: TITLE_PLACEHOLDER, flag } : { text: value, flag: null };
}

/** A number or code from tool data, as it may be shown. */
export function displayCode(value: string): { text: string; flag: ToolStringFlag | null } {
  const flag = codeFlag(value);
  return flag ? { text: CODE_PLACEHOLDER, flag } : { text: value, flag: null };
}

/**
 * A name shown in running text, quoted as data: «ООО «Альфа-Снаб»» stays as it is (its name is
 * already in quotes), a bare name gets quotes, a placeholder none. For the answer's renderer.
 */
export function quotedName(shown: string): string {
  if (isPlaceholder(shown) || /[«"“].*[»"”]/.test(shown) || /^ИП\s/u.test(shown)) return shown;
  return `«${shown}»`;
}

/**
 * Whether a text repeats any flagged raw value (or a long enough piece of one): for a check on
 * what is about to be shown, so a value flagged once can never come back through another route.
 */
export function repeatsFlagged(text: string, raws: readonly string[]): boolean {
  const t = text.toLowerCase();
  return raws.some((raw) => {
    const r = raw.toLowerCase().trim();
    if (!r) return false;
    if (t.includes(r)) return true;
    // any run of 4+ words of the planted value
    const words = r.split(/\s+/).filter((w) => w.length > 1);
    for (let i = 0; i + 4 <= words.length; i++) if (t.includes(words.slice(i, i + 4).join(" "))) return true;
    return false;
  });
}
