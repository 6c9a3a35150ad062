// Low-level text folding shared by every Workbench stage. Matching must be insensitive to the
// things users do not control (Unicode form, case, ё/е, repeated spaces, quote style), so every
// comparison goes through `fold` on both sides.

const QUOTE_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ["«", "»"],
  ["„", "“"],
  ["„", "”"],
  ["“", "”"],
  ["‘", "’"],
  ['"', '"'],
];

// ASCII and the basic Cyrillic block are already in NFC and NFKC form: skip the (costly)
// normalization for them — it runs for every name of a 100k-document workspace.
const STABLE = /^[\u0000-\u007f\u0400-\u045f]*$/;

/** Canonical Unicode form: NFC first (compose), then NFKC (fold compatibility forms such as NBSP, fullwidth). */
export function unicodeCanonical(text: string): string {
  if (STABLE.test(text)) return text;
  return text.normalize("NFC").normalize("NFKC");
}

/** Collapse every run of whitespace (incl. NBSP, tabs, newlines) into one space and trim. */
export function collapseSpaces(text: string): string {
  return text.replace(/[\s\u00a0\u2000-\u200b\u202f\u205f\u3000]+/gu, " ").trim();
}

// Lower-case Latin/Cyrillic words and digits, single spaces (ё, U+0451, is outside а-я).
export const SIMPLE_WORDS = /^[а-яa-z0-9]+(?: [а-яa-z0-9]+)*$/;
const NEEDS_SPACE_FIX = /\s\s|[^\S ]|^\s|\s$/;
const PLAIN_ID = /^[a-z0-9._-]*$/;

/** The matching key: canonical Unicode, lower case, ё→е, unified dashes, collapsed spaces. */
export function fold(text: string): string {
  // Fast paths matter: every name and identity of a 100k-document workspace goes through here.
  if (PLAIN_ID.test(text)) return text;
  const lower = text.toLowerCase();
  // Plain lower-case words separated by single spaces are already folded (no ё, nothing to normalize).
  if (SIMPLE_WORDS.test(lower)) return lower;
  let s = unicodeCanonical(lower);
  if (s.includes("ё")) s = s.replace(/ё/g, "е");
  if (/[\u2010-\u2015\u2212]/.test(s)) s = s.replace(/[\u2010-\u2015\u2212]/g, "-");
  return NEEDS_SPACE_FIX.test(s) ? collapseSpaces(s) : s;
}

export interface QuotedSpan {
  text: string;
  start: number;
  end: number;
}

/**
 * Quoted strings in «», „“, “”, "" and ‘’. Nested quotes of another style stay inside the outer
 * span («Отчёт „Итоги“») — the outermost pair wins because it opened first.
 */
export function extractQuoted(text: string): QuotedSpan[] {
  const spans: QuotedSpan[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    const pairs = QUOTE_PAIRS.filter(([open]) => open === ch);
    let matched = false;
    for (const [, close] of pairs) {
      const j = findClose(text, i + 1, ch, close);
      if (j > i + 1) {
        const inner = collapseSpaces(text.slice(i + 1, j));
        if (inner) spans.push({ text: inner, start: i, end: j + 1 });
        i = j + 1;
        matched = true;
        break;
      }
    }
    if (!matched) i++;
  }
  return spans;
}

function findClose(text: string, from: number, open: string, close: string): number {
  if (open === close) return text.indexOf(close, from);
  let depth = 1;
  for (let k = from; k < text.length; k++) {
    const c = text[k];
    if (c === open && open !== close) depth++;
    else if (c === close) {
      depth--;
      if (depth === 0) return k;
    }
  }
  return -1;
}

/** Replace every quote character by a plain double quote (for the canonical request text). */
export function unifyQuotes(text: string): string {
  return text.replace(/[«»„“”‟″]/g, '"').replace(/[‘’‚‛]/g, "'");
}

/** Word tokens of folded text: letters/digits runs; hyphenated words stay whole. */
export function tokenize(folded: string): string[] {
  return folded.match(/[\p{L}\p{N}]+(?:[-_.][\p{L}\p{N}]+)*/gu) ?? [];
}

/** Plain word tokens, hyphenated words split into parts (for name matching). */
export function words(folded: string): string[] {
  // Most names are plain words and single spaces: a split is several times cheaper than the regex.
  if (SIMPLE_WORDS.test(folded)) return folded.split(" ");
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

export const UUID_RE = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/**
 * Identity-like tokens: Latin slugs with at least one separator (composition-order-approval,
 * entity_customer, report.sales.q1). A single Latin word is not identity-like — it is more likely
 * a transliterated name ("Alfa").
 */
export const IDENTITY_RE = /(?<![\p{L}\p{N}_.-])[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+(?![\p{L}\p{N}_-])/giu;

export function estimateTokens(text: string): number {
  // ~4 characters per token for mixed Russian/JSON text; only used for budgeting, never billing.
  return Math.ceil(text.length / 4);
}
