// The resolver's index over one workspace snapshot, built once per snapshotSha256 and cached:
// a repeated message against the same snapshot never rebuilds it. The core (identity, words,
// stems) is built eagerly; the parts only the weaker signals read (transliteration skeletons,
// typo deletions, content words) are built on their first use and then kept with the index.
import { deletes1 } from "./distance";
import { stem } from "./stem";
import { fold, words } from "./text";
import { skeletonWord } from "./translit";
import type { WorkspaceDocument, WorkspaceSnapshot } from "./types";

export interface IndexedDoc {
  doc: WorkspaceDocument;
  identityKey: string;
  nameKey: string;
  nameWords: string[];
  nameStems: string[];
}

export interface ResolverIndex {
  sha: string;
  docs: IndexedDoc[];
  byIdentity: Map<string, number>;
  /** Sorted name words → docs: the same words in any order; the exact order is checked on `nameKey`. */
  byWordSet: Map<string, number[]>;
  byWord: Map<string, number[]>;
  byStem: Map<string, number[]>;
  children: Map<string, number[]>;
  types: Set<string>;
  buildMs: number;
  /** Built on first use; see `lazy*` below. */
  lazy: {
    skeleton?: { bySkeleton: Map<string, number[]>; nameSkeleton: string[][]; ms: number };
    typo?: { deletes: Map<string, string[]>; vocabByFirst: Map<string, string[]>; memo: Map<string, string[]>; ms: number };
    content?: { byContentStem: Map<string, number[]>; ms: number };
  };
}

const setKey = (xs: readonly string[]) => (xs.length > 1 ? [...xs].sort().join(" ") : (xs[0] ?? ""));

// All postings of document i are written while i is processed, so "already there" can only be
// the last element: a word twice in one name is posted once.
function push<K>(m: Map<K, number[]>, k: K, i: number): void {
  const a = m.get(k);
  if (a === undefined) m.set(k, [i]);
  else if (a[a.length - 1] !== i) a.push(i);
}

/** String leaves of a document's content, folded — the weak "content mention" signal reads these. */
export function contentText(content: Record<string, unknown>, limit = 600): string {
  const out: string[] = [];
  let len = 0;
  const walk = (v: unknown, depth: number) => {
    if (len > limit || depth > 4) return;
    if (typeof v === "string") { out.push(v); len += v.length; }
    else if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
    else if (v && typeof v === "object") Object.values(v).forEach((x) => walk(x, depth + 1));
  };
  walk(content, 0);
  return fold(out.join(" ").slice(0, limit));
}

export function buildIndex(snapshot: WorkspaceSnapshot, sha: string): ResolverIndex {
  const t0 = performance.now();
  const idx: ResolverIndex = {
    sha, docs: new Array(snapshot.documents.length), byIdentity: new Map(), byWordSet: new Map(), byWord: new Map(), byStem: new Map(),
    children: new Map(), types: new Set(), buildMs: 0, lazy: {},
  };
  const docs = snapshot.documents;
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]!;
    const nameWords = words(fold(doc.displayName));
    const nameStems = nameWords.map(stem);
    const nameKey = nameWords.join(" ");
    idx.docs[i] = { doc, identityKey: fold(doc.identity), nameKey, nameWords, nameStems };
    idx.types.add(doc.documentType);
    idx.byIdentity.set(idx.docs[i]!.identityKey, i);
    push(idx.byWordSet, nameWords.length > 1 ? setKey(nameWords) : nameKey, i);
    for (const w of nameWords) push(idx.byWord, w, i);
    for (const st of nameStems) push(idx.byStem, st, i);
    if (doc.folderIdentity) push(idx.children, doc.folderIdentity, i);
  }
  idx.buildMs = performance.now() - t0;
  return idx;
}

/** Transliteration skeletons of every name (first Latin-script mention). */
export function skeletonIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["skeleton"]> {
  if (idx.lazy.skeleton) return idx.lazy.skeleton;
  const t0 = performance.now();
  const bySkeleton = new Map<string, number[]>();
  const nameSkeleton = idx.docs.map((d, i) => {
    const sk = d.nameWords.map(skeletonWord);
    for (const s of sk) push(bySkeleton, s, i);
    return sk;
  });
  return (idx.lazy.skeleton = { bySkeleton, nameSkeleton, ms: performance.now() - t0 });
}

/** SymSpell deletions of the name vocabulary (first mention with a word the vocabulary lacks). */
export function typoIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["typo"]> {
  if (idx.lazy.typo) return idx.lazy.typo;
  const t0 = performance.now();
  const deletes = new Map<string, string[]>();
  const vocabByFirst = new Map<string, string[]>();
  for (const w of idx.byWord.keys()) {
    if (w.length < 5) continue;
    for (const k of deletes1(w)) {
      const a = deletes.get(k);
      if (a) a.push(w); else deletes.set(k, [w]);
    }
    const b = vocabByFirst.get(w[0]!);
    if (b) b.push(w); else vocabByFirst.set(w[0]!, [w]);
  }
  return (idx.lazy.typo = { deletes, vocabByFirst, memo: new Map(), ms: performance.now() - t0 });
}

/** Stems of content words (first mention that no name matches: suggestions only). */
export function contentIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["content"]> {
  if (idx.lazy.content) return idx.lazy.content;
  const t0 = performance.now();
  const byContentStem = new Map<string, number[]>();
  idx.docs.forEach((d, i) => {
    for (const w of words(contentText(d.doc.content ?? {}))) if (w.length > 3) push(byContentStem, stem(w), i);
  });
  return (idx.lazy.content = { byContentStem, ms: performance.now() - t0 });
}

/** Whether one document's content mentions every given stem (the bonus for a name candidate). */
export function contentMentions(idx: ResolverIndex, i: number, stems: readonly string[]): boolean {
  if (stems.length === 0) return false;
  if (idx.lazy.content) return stems.every((s) => { const p = idx.lazy.content!.byContentStem.get(s); return !!p && p.includes(i); });
  const own = new Set(words(contentText(idx.docs[i]!.doc.content ?? {})).filter((w) => w.length > 3).map(stem));
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
      if (d.documentType === "Folder" && !seen.has(d.identity)) { seen.add(d.identity); queue.push(d.identity); }
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
