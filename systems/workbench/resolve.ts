// Stage 06 core: candidates for one mention, by signals in falling reliability. Each signal is
// named in the candidate's `signals`; the weaker ones (stem, transliteration, typo) score lower and
// a tie between two candidates stays `ambiguous` — the resolver never guesses.
import { osaDistance, deletes1, typoAllowance } from "./distance";
import { SUPPORTED_TYPES } from "./lexicon";
import { contentIndex, contentMentions, skeletonIndex, typoIndex, type ResolverIndex } from "./resolve-index";
import { stem } from "./stem";
import { fold, words } from "./text";
import { hasCyrillic, hasLatin, skeletonWord } from "./translit";
import type { ResolutionStatus, ScoredCandidate } from "./types";

export const SCORES = {
  identity: 1,
  display_name_exact: 0.95,
  tokens_equal: 0.88,
  stem: 0.75,
  transliteration: 0.7,
  typo: 0.65,
  tokensPartial: (coverage: number) => 0.6 + 0.2 * coverage,
  weakPartial: (coverage: number) => 0.42 + 0.1 * coverage,
  content_mention_alone: 0.2,
  content_mention_bonus: 0.05,
} as const;

/** Below this no candidate is a name-level match: the mention is not found (suggestions only). */
export const FOUND_THRESHOLD = 0.5;
/** Two candidates closer than this are "close": the case is ambiguous, not a guess. */
export const CLOSE_MARGIN = 0.1;
export const MAX_CANDIDATES = 5;

export interface MentionQuery {
  mention: string;
  entityType?: string;
  /** Restrict to these document indexes (folder scope). */
  scope?: Set<number>;
}

export interface MentionResult {
  status: ResolutionStatus;
  candidates: ScoredCandidate[];
  resolvedIdentity?: string;
  resolvedBy?: "exact" | "signal";
}

type Acc = Map<number, { score: number; signals: string[] }>;

function add(acc: Acc, i: number, score: number, signal: string): void {
  const cur = acc.get(i);
  if (!cur) acc.set(i, { score, signals: [signal] });
  else {
    if (!cur.signals.includes(signal)) cur.signals.push(signal);
    if (score > cur.score) cur.score = score;
  }
}

/** Posting lists are built in document order, so membership is a binary search. */
function contains(sorted: readonly number[], x: number): boolean {
  let lo = 0,
    hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = sorted[mid]!;
    if (v === x) return true;
    if (v < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * Docs whose words cover every slot (a slot is a set of acceptable words). Only the rarest
 * slot's postings are materialized; the others are probed by binary search, so a common word
 * (in half the workspace) costs a few lookups, not a 50k-element set.
 */
function intersectSlots(slots: ReadonlyArray<ReadonlySet<string>>, postings: Map<string, number[]>): number[] {
  if (slots.length === 0) return [];
  const lists = slots
    .map((alts) => {
      const ls: number[][] = [];
      let size = 0;
      for (const a of alts) {
        const p = postings.get(a);
        if (p) {
          ls.push(p);
          size += p.length;
        }
      }
      return { ls, size };
    })
    .sort((a, b) => a.size - b.size);
  const first = lists[0]!;
  if (first.size === 0) return [];
  const seed = first.ls.length === 1 ? first.ls[0]! : [...new Set(first.ls.flat())];
  const rest = lists.slice(1);
  const out: number[] = [];
  for (const i of seed) if (rest.every((r) => r.ls.some((p) => contains(p, i)))) out.push(i);
  return out;
}

/** Vocabulary words within the typo allowance of `w` (distance 1 via deletes, 2 by a bounded scan). */
export function typoAlternatives(idx: ResolverIndex, w: string): string[] {
  const allow = typoAllowance(w.length);
  if (allow === 0) return [];
  const typo = typoIndex(idx);
  const memo = typo.memo.get(w);
  if (memo) return memo;
  const found = new Set<string>();
  const keys = [w, ...deletes1(w)];
  for (const k of keys) {
    for (const id of typo.deletes.wordsFor(k)) {
      // deletion or substitution
      const v = idx.names.vocab.strings[id]!;
      if (v !== w) found.add(v);
    }
    if (k !== w && idx.byWord.has(k)) found.add(k); // w carries one extra letter
  }
  const out = [...found].filter((v) => osaDistance(v, w, 1) <= 1);
  if (out.length === 0 && allow >= 2) {
    for (const v of typo.vocabByFirst.get(w[0]!) ?? []) {
      if (Math.abs(v.length - w.length) <= 2 && osaDistance(v, w, 2) <= 2) out.push(v);
    }
  }
  if (typo.memo.size > 10_000) typo.memo.clear();
  typo.memo.set(w, out);
  return out;
}

export function collectCandidates(idx: ResolverIndex, mention: string): Acc {
  const acc: Acc = new Map();
  const f = fold(mention);
  const ws = words(f);
  if (ws.length === 0) return acc;

  const byId = idx.byIdentity.get(f) ?? idx.byIdentity.get(f.replace(/\s+/g, "-"));
  if (byId !== undefined) add(acc, byId, SCORES.identity, "identity");

  // Names containing every mention word: the same words in the same order is the exact name,
  // in another order the same tokens, with extra words a partial match.
  const sameMultiset = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && [...a].sort().join(" ") === [...b].sort().join(" ");
  const nameKey = ws.join(" ");
  for (const i of intersectSlots(
    ws.map((w) => new Set([w])),
    idx.byWord,
  )) {
    const d = idx.docs[i]!;
    if (d.nameKey === nameKey) add(acc, i, SCORES.display_name_exact, "display_name_exact");
    else if (sameMultiset(ws, d.nameWords)) add(acc, i, SCORES.tokens_equal, "tokens");
    else add(acc, i, SCORES.tokensPartial(ws.length / d.nameWords.length), "tokens");
  }

  // Beyond v0.6.0, each a separate, weaker signal. A doc whose words all match and that has no
  // other words is a full match of that signal; one with extra words a partial one.
  const stems = ws.map(stem);
  for (const i of intersectSlots(
    stems.map((s) => new Set([s])),
    idx.byStem,
  )) {
    const d = idx.docs[i]!;
    add(
      acc,
      i,
      sameMultiset(stems, d.nameWords.map(stem)) ? SCORES.stem : SCORES.weakPartial(ws.length / d.nameWords.length),
      "stem",
    );
  }

  // Both directions: a Latin mention for a Cyrillic name ("Obekt Alfa") and a Cyrillic one for a
  // Latin name ("Свифт" → "SWIFT"). Only the other script's names are this signal's business.
  // A Cyrillic mention that already has a whole-name match skips it (most mentions are Cyrillic).
  const latinMention = hasLatin(f);
  const cyrillicMention = hasCyrillic(f) && ![...acc.values()].some((v) => v.score >= SCORES.tokens_equal);
  if (latinMention || cyrillicMention) {
    const sk = ws.map(skeletonWord);
    const skIdx = skeletonIndex(idx);
    const crossScript = (i: number) => {
      const name = idx.docs[i]!.nameKey;
      return (latinMention && (hasCyrillic(name) || !hasLatin(name))) || (cyrillicMention && hasLatin(name));
    };
    for (const i of intersectSlots(
      sk.map((s) => new Set([s])),
      skIdx.bySkeleton,
    )) {
      if (!crossScript(i)) continue;
      const d = idx.docs[i]!;
      add(
        acc,
        i,
        sameMultiset(sk, d.nameWords.map(skeletonWord))
          ? SCORES.transliteration
          : SCORES.weakPartial(ws.length / d.nameWords.length),
        "transliteration",
      );
    }
  }

  // Typos: a slot accepts the word itself or any vocabulary word within its allowance.
  // A word the vocabulary knows is taken as typed; only unknown words get typo alternatives.
  const slots = ws.map((w) => new Set(idx.byWord.has(w) ? [w] : [w, ...typoAlternatives(idx, w)]));
  if (slots.some((s) => s.size > 1)) {
    for (const i of intersectSlots(slots, idx.byWord)) {
      const d = idx.docs[i]!;
      const typoUsed = ws.some((w) => !d.nameWords.includes(w));
      if (!typoUsed) continue;
      const full = d.nameWords.length === ws.length;
      add(acc, i, full ? SCORES.typo : SCORES.weakPartial(ws.length / d.nameWords.length), "typo");
    }
  }

  // Content mention: weak. For name candidates a small bonus (never enough to separate two close
  // ones); when no name matches at all, documents mentioning it are offered as suggestions.
  const contentStems = ws.filter((w) => w.length > 3).map(stem);
  if (contentStems.length) {
    const named = [...acc.entries()]
      .filter(([, v]) => v.score >= FOUND_THRESHOLD)
      .sort((a, b) => b[1].score - a[1].score)
      .slice(0, 20);
    for (const [i, cur] of named) {
      if (contentMentions(idx, i, contentStems))
        add(acc, i, Math.min(0.99, cur.score + SCORES.content_mention_bonus), "content_mention");
    }
    if (named.length === 0) {
      for (const i of intersectSlots(
        contentStems.map((s) => new Set([s])),
        contentIndex(idx).byContentStem,
      ).slice(0, 50)) {
        if (!acc.has(i)) add(acc, i, SCORES.content_mention_alone, "content_mention");
      }
    }
  }
  return acc;
}

export function resolveMention(idx: ResolverIndex, q: MentionQuery): MentionResult {
  if (q.entityType && !(SUPPORTED_TYPES as readonly string[]).includes(q.entityType)) {
    return { status: "unsupported_type", candidates: [] };
  }
  const acc = collectCandidates(idx, q.mention);
  let entries = [...acc.entries()].filter(
    ([i]) => (!q.scope || q.scope.has(i)) && (!q.entityType || idx.docs[i]!.doc.documentType === q.entityType),
  );
  const supported = entries.filter(([i]) =>
    (SUPPORTED_TYPES as readonly string[]).includes(idx.docs[i]!.doc.documentType),
  );
  if (supported.length === 0 && entries.some(([, v]) => v.score >= FOUND_THRESHOLD)) {
    return { status: "unsupported_type", candidates: [] };
  }
  entries = supported;
  entries.sort(
    ([ia, a], [ib, b]) => b.score - a.score || idx.docs[ia]!.doc.identity.localeCompare(idx.docs[ib]!.doc.identity),
  );
  const top = entries[0];
  const toCandidate = ([i, v]: [number, { score: number; signals: string[] }], k: number): ScoredCandidate => {
    const d = idx.docs[i]!.doc;
    const signals =
      q.entityType && v.signals.includes("identity")
        ? ["document_type+identity", ...v.signals.filter((s) => s !== "identity")]
        : v.signals;
    return {
      candidateId: `c${k + 1}`,
      identity: d.identity,
      displayName: d.displayName,
      documentType: d.documentType,
      score: Math.round(v.score * 1000) / 1000,
      signals,
    };
  };
  if (!top || top[1].score < FOUND_THRESHOLD) {
    // Asked for one type, but the name exists as another ("отчёт «Инвентаризация»" that is a
    // composition): not found — and those documents are offered, never taken.
    const otherTypes =
      q.entityType && entries.length === 0
        ? [...acc.entries()]
            .filter(
              ([i, v]) =>
                v.score >= FOUND_THRESHOLD &&
                (!q.scope || q.scope.has(i)) &&
                (SUPPORTED_TYPES as readonly string[]).includes(idx.docs[i]!.doc.documentType),
            )
            .sort(
              ([ia, a], [ib, b]) =>
                b.score - a.score || idx.docs[ia]!.doc.identity.localeCompare(idx.docs[ib]!.doc.identity),
            )
            .map(([i, v]): [number, { score: number; signals: string[] }] => [
              i,
              { score: v.score, signals: [...v.signals, "other_type"] },
            ])
        : [];
    return {
      status: "not_found",
      candidates: (otherTypes.length ? otherTypes : entries).slice(0, MAX_CANDIDATES).map(toCandidate),
    };
  }
  // An exact identity always wins (seed: documentType + identity is the most reliable signal):
  // the mention, folded, is a document's identity character for character — never a name that
  // merely reads like one — so no fuzzy name match can make it ambiguous.
  const exactId = idx.byIdentity.get(fold(q.mention).trim());
  if (exactId !== undefined && exactId === top[0]) {
    return {
      status: "resolved",
      candidates: entries.slice(0, MAX_CANDIDATES).map(toCandidate),
      resolvedIdentity: idx.docs[exactId]!.doc.identity,
      resolvedBy: "exact",
    };
  }
  const close = entries.filter(([, v]) => v.score >= top[1].score - CLOSE_MARGIN + 1e-9);
  if (close.length > 1) {
    return { status: "ambiguous", candidates: close.slice(0, MAX_CANDIDATES).map(toCandidate) };
  }
  const strongest = top[1].signals.some((s) => s === "identity" || s === "display_name_exact");
  return {
    status: "resolved",
    candidates: entries.slice(0, MAX_CANDIDATES).map(toCandidate),
    resolvedIdentity: idx.docs[top[0]]!.doc.identity,
    resolvedBy: strongest ? "exact" : "signal",
  };
}
