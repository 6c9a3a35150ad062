// The resolver's index over one workspace snapshot, built once per snapshotSha256 and cached:
// a repeated message against the same snapshot never rebuilds it. The core (identity, words,
// stems) is built eagerly; the parts only the weaker signals read (transliteration skeletons,
// typo deletions, content words) are built on their first use and then kept with the index.
import { stem } from "./stem";
import { fold, SIMPLE_WORDS, words } from "./text";
import { skeletonWord } from "./translit";
import type { WorkspaceDocument, WorkspaceSnapshot } from "./types";

export interface IndexedDoc {
  doc: WorkspaceDocument;
  identityKey: string;
  nameKey: string;
  nameWords: string[];
}

export interface ResolverIndex {
  sha: string;
  docs: IndexedDoc[];
  byIdentity: Map<string, number>;
  byWord: Map<string, number[]>;
  byStem: Map<string, number[]>;
  children: Map<string, number[]>;
  types: Set<string>;
  buildMs: number;
  /** Built on first use; see `lazy*` below. */
  lazy: {
    skeleton?: { bySkeleton: Map<string, number[]>; ms: number };
    typo?: {
      deletes: Map<string, string | string[]>;
      vocabByFirst: Map<string, string[]>;
      memo: Map<string, string[]>;
      ms: number;
    };
    content?: { byContentStem: Map<string, number[]>; ms: number };
  };
}

// All postings of document i are written while i is processed, so "already there" can only be
// the last element: a word twice in one name is posted once.
function push<K>(m: Map<K, number[]>, k: K, i: number): void {
  const a = m.get(k);
  if (a === undefined) m.set(k, [i]);
  else if (a[a.length - 1] !== i) a.push(i);
}

/**
 * Postings keyed by a function of the word (its stem, its skeleton): the word lists are merged,
 * kept sorted (membership is a binary search) and free of duplicates.
 */
function regroup(byWord: Map<string, number[]>, key: (w: string) => string): Map<string, number[]> {
  const groups = new Map<string, number[][]>();
  for (const [w, postings] of byWord) {
    const k = key(w);
    const g = groups.get(k);
    if (g) g.push(postings);
    else groups.set(k, [postings]);
  }
  const out = new Map<string, number[]>();
  for (const [k, lists] of groups) {
    if (lists.length === 1) {
      out.set(k, lists[0]!);
      continue;
    }
    const merged = lists.flat().sort((a, b) => a - b);
    out.set(
      k,
      merged.filter((x, j) => j === 0 || x !== merged[j - 1]),
    );
  }
  return out;
}

/** String leaves of a document's content, folded — the weak "content mention" signal reads these. */
export function contentText(content: Record<string, unknown>, limit = 600): string {
  // Fast path: the common flat object of strings (e.g. {description}) needs no recursive walk.
  let flat = "";
  let isFlat = true;
  for (const k in content) {
    const v = content[k];
    if (typeof v === "string") flat = flat ? `${flat} ${v}` : v;
    else if (v !== null && v !== undefined && typeof v !== "number" && typeof v !== "boolean") {
      isFlat = false;
      break;
    }
  }
  if (isFlat) return flat ? fold(flat.length > limit ? flat.slice(0, limit) : flat) : "";
  const out: string[] = [];
  let len = 0;
  const walk = (v: unknown, depth: number) => {
    if (len > limit || depth > 4) return;
    if (typeof v === "string") {
      out.push(v);
      len += v.length;
    } else if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
    else if (v && typeof v === "object") Object.values(v).forEach((x) => walk(x, depth + 1));
  };
  walk(content, 0);
  return fold(out.join(" ").slice(0, limit));
}

export function buildIndex(snapshot: WorkspaceSnapshot, sha: string): ResolverIndex {
  const t0 = performance.now();
  const idx: ResolverIndex = {
    sha,
    docs: new Array(snapshot.documents.length),
    byIdentity: new Map(),
    byWord: new Map(),
    byStem: new Map(),
    children: new Map(),
    types: new Set(),
    buildMs: 0,
    lazy: {},
  };
  const docs = snapshot.documents;
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]!;
    // A plain name (lower-case words, single spaces) is its own folded form, a split of it its
    // words, and that string its key: one regex test instead of fold's and words' own.
    const lower = doc.displayName.toLowerCase();
    const plain = SIMPLE_WORDS.test(lower);
    const folded = plain ? lower : fold(doc.displayName);
    const simple = plain || SIMPLE_WORDS.test(folded);
    const nameWords = simple ? folded.split(" ") : words(folded);
    const nameKey = simple ? folded : nameWords.join(" ");
    idx.docs[i] = { doc, identityKey: fold(doc.identity), nameKey, nameWords };
    idx.types.add(doc.documentType);
    idx.byIdentity.set(idx.docs[i]!.identityKey, i);
    for (const w of nameWords) push(idx.byWord, w, i);
    if (doc.folderIdentity) push(idx.children, doc.folderIdentity, i);
  }
  // Stems per distinct word, not per occurrence: 21k stem lookups instead of 250k at 100k docs.
  idx.byStem = regroup(idx.byWord, stem);
  idx.buildMs = performance.now() - t0;
  return idx;
}

/** Transliteration skeletons of every name (first Latin-script mention). */
export function skeletonIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["skeleton"]> {
  if (idx.lazy.skeleton) return idx.lazy.skeleton;
  const t0 = performance.now();
  const bySkeleton = regroup(idx.byWord, skeletonWord);
  return (idx.lazy.skeleton = { bySkeleton, ms: performance.now() - t0 });
}

/** SymSpell deletions of the name vocabulary (first mention with a word the vocabulary lacks). */
export function typoIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["typo"]> {
  if (idx.lazy.typo) return idx.lazy.typo;
  const t0 = performance.now();
  // Most deletion keys belong to one word: keep the word itself, an array only when shared.
  const deletes = new Map<string, string | string[]>();
  const vocabByFirst = new Map<string, string[]>();
  for (const w of idx.byWord.keys()) {
    if (w.length < 5) continue;
    // deletes1(w) inline, without its Set: a key repeated within one word meets `a === w` or
    // `a.includes(w)` below and is posted once all the same.
    for (let j = 0; j < w.length; j++) {
      const k = w.slice(0, j) + w.slice(j + 1);
      const a = deletes.get(k);
      if (a === undefined) deletes.set(k, w);
      else if (typeof a === "string") {
        if (a !== w) deletes.set(k, [a, w]);
      } else if (!a.includes(w)) a.push(w);
    }
    const b = vocabByFirst.get(w[0]!);
    if (b) b.push(w);
    else vocabByFirst.set(w[0]!, [w]);
  }
  return (idx.lazy.typo = { deletes, vocabByFirst, memo: new Map(), ms: performance.now() - t0 });
}

/** Stems of content words (first mention that no name matches: suggestions only). */
export function contentIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["content"]> {
  if (idx.lazy.content) return idx.lazy.content;
  const t0 = performance.now();
  const byContentWord = new Map<string, number[]>();
  idx.docs.forEach((d, i) => {
    for (const w of words(contentText(d.doc.content ?? {}))) if (w.length > 3) push(byContentWord, w, i);
  });
  // Stem each distinct content word once, then merge the postings per stem.
  return (idx.lazy.content = { byContentStem: regroup(byContentWord, stem), ms: performance.now() - t0 });
}

/** Whether one document's content mentions every given stem (the bonus for a name candidate). */
export function contentMentions(idx: ResolverIndex, i: number, stems: readonly string[]): boolean {
  if (stems.length === 0) return false;
  if (idx.lazy.content)
    return stems.every((s) => {
      const p = idx.lazy.content!.byContentStem.get(s);
      return !!p && p.includes(i);
    });
  const own = new Set(
    words(contentText(idx.docs[i]!.doc.content ?? {}))
      .filter((w) => w.length > 3)
      .map(stem),
  );
  return stems.every((s) => own.has(s));
}

/** Every document inside a folder and its nested folders (the folder itself excluded). */
export function folderSubtree(idx: ResolverIndex, folderIdentity: string): Set<number> {
  const out = new Set<number>();
  const seen = new Set<string>([folderIdentity]);
  const queue = [folderIdentity];
  while (queue.length) {
    const f = queue.shift()!;
    for (const i of idx.children.get(f) ?? []) {
      if (out.has(i)) continue;
      out.add(i);
      const d = idx.docs[i]!.doc;
      if (d.documentType === "Folder" && !seen.has(d.identity)) {
        seen.add(d.identity);
        queue.push(d.identity);
      }
    }
  }
  return out;
}

// ---- cache keyed by snapshotSha256 ----
const CACHE_SIZE = 8;
const cache = new Map<string, ResolverIndex>();
let builds = 0;

export function getIndex(snapshot: WorkspaceSnapshot, sha: string): { index: ResolverIndex; cached: boolean } {
  const hit = cache.get(sha);
  if (hit) {
    cache.delete(sha);
    cache.set(sha, hit); // LRU: most recent last
    return { index: hit, cached: true };
  }
  const index = buildIndex(snapshot, sha);
  builds++;
  cache.set(sha, index);
  while (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return { index, cached: false };
}

export function indexCacheStats(): { builds: number; size: number } {
  return { builds, size: cache.size };
}
