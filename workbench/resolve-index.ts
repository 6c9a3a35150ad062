// The resolver's index over one workspace snapshot, built once per snapshotSha256 and cached:
// a repeated message against the same snapshot never rebuilds it.
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
  nameSkeleton: string[];
  latinName: boolean;
}

export interface ResolverIndex {
  sha: string;
  docs: IndexedDoc[];
  byIdentity: Map<string, number>;
  /** Sorted name words → docs: the same words in any order; the exact order is checked on `nameKey`. */
  byWordSet: Map<string, number[]>;
  byWord: Map<string, number[]>;
  byStem: Map<string, number[]>;
  bySkeleton: Map<string, number[]>;
  byContentStem: Map<string, number[]>;
  /** Typo lookup (SymSpell, distance 1): deletion key → vocabulary words. */
  deletes: Map<string, string[]>;
  /** Vocabulary by first letter, for the distance-2 scan of long words. */
  vocabByFirst: Map<string, string[]>;
  children: Map<string, number[]>;
  types: Set<string>;
  buildMs: number;
}

const setKey = (xs: readonly string[]) => [...xs].sort().join(" ");

function push<K>(m: Map<K, number[]>, k: K, i: number): void {
  const a = m.get(k);
  if (!a) m.set(k, [i]);
  else if (!a.includes(i, Math.max(0, a.length - 8))) a.push(i);
}

/** String leaves of a document's content, folded — the weak "content mention" signal reads these. */
function contentText(content: Record<string, unknown>, limit = 600): string {
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
    sha, docs: [], byIdentity: new Map(), byWordSet: new Map(),
    byWord: new Map(), byStem: new Map(), bySkeleton: new Map(), byContentStem: new Map(),
    deletes: new Map(), vocabByFirst: new Map(), children: new Map(), types: new Set(), buildMs: 0,
  };
  const vocab = new Set<string>();
  snapshot.documents.forEach((doc, i) => {
    const nameWords = words(fold(doc.displayName));
    const nameStems = nameWords.map(stem);
    const nameSkeleton = nameWords.map(skeletonWord);
    const d: IndexedDoc = {
      doc, identityKey: fold(doc.identity), nameKey: nameWords.join(" "), nameWords, nameStems, nameSkeleton,
      latinName: /[a-z]/.test(nameWords.join("")),
    };
    idx.docs.push(d);
    idx.types.add(doc.documentType);
    idx.byIdentity.set(d.identityKey, i);
    push(idx.byWordSet, nameWords.length > 1 ? setKey(nameWords) : d.nameKey, i);
    // push() skips a repeated doc index, so a word twice in one name is posted once.
    for (const w of nameWords) { push(idx.byWord, w, i); vocab.add(w); }
    for (const st of nameStems) push(idx.byStem, st, i);
    for (const sk of nameSkeleton) push(idx.bySkeleton, sk, i);
    for (const w of words(contentText(doc.content ?? {}))) if (w.length > 3) push(idx.byContentStem, stem(w), i);
    if (doc.folderIdentity) push(idx.children, doc.folderIdentity, i);
  });
  for (const w of vocab) {
    if (w.length < 5) continue;
    for (const k of deletes1(w)) {
      const a = idx.deletes.get(k);
      if (a) a.push(w); else idx.deletes.set(k, [w]);
    }
    const first = w[0]!;
    const b = idx.vocabByFirst.get(first);
    if (b) b.push(w); else idx.vocabByFirst.set(first, [w]);
  }
  idx.buildMs = performance.now() - t0;
  return idx;
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
