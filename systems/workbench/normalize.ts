// Stage 02: one canonical representation of the request plus the signals every later stage reads.
// Pure and deterministic: same text in, same structure out.
import { commandOf, DEMONSTRATIVES, PREVIOUS_RE, PRONOUNS, typeOf, type CommandKind } from "./lexicon";
import {
  collapseSpaces,
  extractQuoted,
  fold,
  IDENTITY_RE,
  unicodeCanonical,
  unifyQuotes,
  UUID_RE,
  words,
} from "./text";

export interface CommandSignal {
  word: string;
  kind: CommandKind;
  /** Index of the word in `words`. */
  at: number;
}

export interface HistoryRef {
  text: string;
  kind: "pronoun" | "demonstrative" | "previous";
  gender?: "f" | "m" | "n" | "pl" | "any";
  /** Demonstratives name their type ("эта композиция"). */
  entityType?: string;
  at: number;
}

export interface Normalized {
  original: string;
  /** NFC→NFKC and collapsed whitespace, original quotes kept (the parser splits this). */
  text: string;
  /** `text` with unified quotes; case preserved (for display and the model). */
  canonical: string;
  /** The matching key: canonical + lower case + ё→е. */
  folded: string;
  words: string[];
  quoted: string[];
  uuids: string[];
  identities: string[];
  commands: CommandSignal[];
  historyRefs: HistoryRef[];
}

export function normalize(text: string): Normalized {
  const canonicalRaw = collapseSpaces(unicodeCanonical(text));
  const quoted = extractQuoted(canonicalRaw).map((q) => q.text);
  const folded = fold(canonicalRaw);
  const ws = words(folded);
  const uuids = unique([...folded.matchAll(UUID_RE)].map((m) => m[0]));
  const unquotedFolded = stripQuoted(folded);
  const identities = unique(
    [...unquotedFolded.matchAll(IDENTITY_RE)].map((m) => m[0]).filter((id) => !uuids.includes(id)),
  ).concat(uuids);
  return {
    original: text,
    text: canonicalRaw,
    canonical: unifyQuotes(canonicalRaw),
    folded,
    words: ws,
    quoted,
    uuids,
    identities: unique(identities),
    commands: detectCommands(words(unquotedFolded)),
    historyRefs: detectHistoryRefs(words(unquotedFolded)),
  };
}

function detectCommands(ws: string[]): CommandSignal[] {
  const out: CommandSignal[] = [];
  ws.forEach((w, i) => {
    let kind = commandOf(w);
    // "выведи/покажи список …" is a list command, not an inspection.
    if ((kind === "inspect" || kind === "find") && ws[i + 1] === "список") kind = "list";
    if (kind === "list" && w === "список" && out.at(-1)?.at === i - 1) return;
    // "где" is a find only when it opens the clause ("где лежит …"), not inside a sentence.
    if (w === "где" && i !== 0) return;
    if (kind) out.push({ word: w, kind, at: i });
  });
  return out;
}

function detectHistoryRefs(ws: string[]): HistoryRef[] {
  const out: HistoryRef[] = [];
  ws.forEach((w, i) => {
    const gender = PRONOUNS[w];
    if (gender) {
      out.push({ text: w, kind: "pronoun", gender, at: i });
      return;
    }
    if (DEMONSTRATIVES.has(w)) {
      const next = ws[i + 1];
      const t = next ? typeOf(next) : undefined;
      if (t) out.push({ text: `${w} ${next}`, kind: "demonstrative", entityType: t, at: i });
      return;
    }
    if (PREVIOUS_RE.test(w)) {
      const next = ws[i + 1];
      const t = next ? typeOf(next) : undefined;
      out.push({ text: t ? `${w} ${next}` : w, kind: "previous", ...(t ? { entityType: t } : {}), at: i });
    }
  });
  // "тот же"/"та же" are two words; PREVIOUS_RE sees them only joined.
  for (let i = 0; i + 1 < ws.length; i++) {
    if ((ws[i] === "тот" || ws[i] === "та" || ws[i] === "ту") && ws[i + 1] === "же") {
      out.push({ text: `${ws[i]} же`, kind: "previous", at: i });
    }
  }
  return out;
}

/** Folded text with quoted spans blanked, so words inside a name are not read as commands or refs. */
export function stripQuoted(folded: string): string {
  return folded.replace(/«[^»]*»|„[^“”]*[“”]|“[^”]*”|"[^"]*"/g, " ");
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}
