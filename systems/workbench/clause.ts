// Splitting a request into clauses and clauses into tokens. Quoted names are opaque: a delimiter
// or a command word inside «…» never splits or steers anything.
import { commandOf, DELIMITERS } from "./lexicon";
import { fold } from "./text";

export interface Token {
  kind: "word" | "quote" | "punct";
  /** As typed (case kept); for a quote, the inner text. */
  raw: string;
  /** Folded form for matching. */
  f: string;
}

const TOKEN_RE = /«[^»]*»|„[^“”]*[“”]|“[^”]*”|"[^"]*"|[\p{L}\p{N}]+(?:[-_.][\p{L}\p{N}]+)*|[,.;:!?()]/gu;

export function tokenizeClause(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(TOKEN_RE)) {
    const s = m[0];
    const first = s[0]!;
    if ('«„“"'.includes(first) && s.length >= 2) {
      const inner = s.slice(1, -1).trim();
      if (inner) out.push({ kind: "quote", raw: inner, f: fold(inner) });
    } else if (/[\p{L}\p{N}]/u.test(first)) {
      out.push({ kind: "word", raw: s, f: fold(s) });
    } else {
      out.push({ kind: "punct", raw: s, f: s });
    }
  }
  return out;
}

/** Mask quoted spans with same-length filler so delimiter search cannot match inside them. */
function maskQuotes(text: string): string {
  return text.replace(/«[^»]*»|„[^“”]*[“”]|“[^”]*”|"[^"]*"/g, (s) => "\u0000".repeat(s.length));
}

/**
 * Split on the supported delimiters (затем, потом, после этого, ", и <command>"), outside quotes.
 * Returns the clause texts and which delimiter opened each clause after the first.
 */
export function splitClauses(text: string): { clauses: string[]; delimiters: string[] } {
  const masked = fold(maskQuotes(text));
  // fold() keeps string length for Cyrillic/Latin (lower-casing, ё→е, dashes) but collapses
  // spaces; the input is already whitespace-collapsed by normalize(), so offsets line up.
  const cuts: { at: number; len: number; delim: string }[] = [];
  for (const d of DELIMITERS) {
    const re = new RegExp(`(^|[\\s,;])${escapeRe(d.trim())}(?=[\\s,:]|$)`, "g");
    for (const m of masked.matchAll(re)) {
      const at = m.index! + m[1]!.length;
      // «а также» joins nouns as often as clauses: it opens a clause only before a command verb
      // («покажи форму, а также сущность «X»» is one clause with two types)
      const next = masked.slice(at + d.trim().length).match(/[\p{L}]+/u)?.[0];
      if (d.trim() === "а также" && !(next && commandOf(next))) continue;
      if (!cuts.some((c) => at < c.at + c.len && c.at < at + d.trim().length))
        cuts.push({ at, len: d.trim().length, delim: d.trim() });
    }
  }
  // ", и <command>" / " и <command>": a conjunction starts a new clause only before a command verb.
  for (const m of masked.matchAll(/(,?\s)и\s+([\p{L}]+)/gu)) {
    if (commandOf(m[2]!) && commandOf(m[2]!) !== "mutate") {
      const at = m.index! + m[1]!.length;
      if (!cuts.some((c) => Math.abs(c.at - at) < 3)) cuts.push({ at, len: 1, delim: "и" });
    }
  }
  cuts.sort((a, b) => a.at - b.at);
  const clauses: string[] = [];
  const delimiters: string[] = [];
  let from = 0;
  for (const c of cuts) {
    const piece = trimClause(text.slice(from, c.at));
    if (piece) clauses.push(piece);
    else if (clauses.length === 0) {
      // a leading delimiter ("Затем покажи …") is not a split
      from = c.at + c.len;
      continue;
    }
    delimiters.push(c.delim);
    from = c.at + c.len;
  }
  const last = trimClause(text.slice(from));
  if (last) clauses.push(last);
  else if (delimiters.length >= clauses.length) delimiters.pop();
  return { clauses, delimiters: delimiters.slice(0, Math.max(0, clauses.length - 1)) };
}

function trimClause(s: string): string {
  return s
    .replace(/^[\s,;.]+|[\s,;]+$/g, "")
    .replace(/^(?:а|и)\s+/i, "")
    .trim();
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
