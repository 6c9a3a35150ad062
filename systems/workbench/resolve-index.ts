// The resolver's index over one workspace snapshot, built once per snapshotSha256 and cached:
// a repeated message against the same snapshot never rebuilds it. The core (identity, words,
// stems) is built eagerly; the parts only the weaker signals read (transliteration skeletons,
// typo deletions, content words) are built on their first use and then kept with the index.
import { stem } from "./stem";
import { fold, words } from "./text";
import { skeletonWord } from "./translit";
import type { WorkspaceDocument, WorkspaceSnapshot } from "./types";
import { IdentityIndex } from "./resolve-identity";
import { DeletionIndex, TYPO_MIN_LENGTH } from "./resolve-typo";
import { foldedWordIds, IntList, Vocabulary } from "./resolve-vocab";

/**
 * The words of every name, as interned ids: document i's words are ids[start[i] .. start[i+1]),
 * word w is vocab.strings[w] and postings[w] the documents whose names have it.
 */
interface NameWords {
  vocab: Vocabulary;
  start: Int32Array;
  ids: Int32Array;
  postings: number[][];
}

/**
 * One document of the index. Its name's words and key are read from the interned ids when first
 * asked for (a query asks for a few candidates', not for 100k), then kept.
 */
export class IndexedDoc {
  private words: string[] | undefined = undefined;
  private key: string | undefined = undefined;

  constructor(
    readonly doc: WorkspaceDocument,
    readonly identityKey: string,
    private readonly names: NameWords,
    private readonly i: number,
  ) {}

  /** `words(fold(displayName))`. */
  get nameWords(): string[] {
    if (this.words === undefined) {
      const { vocab, start, ids } = this.names;
      const out: string[] = [];
      for (let j = start[this.i]!; j < start[this.i + 1]!; j++) out.push(vocab.strings[ids[j]!]!);
      this.words = out;
    }
    return this.words;
  }

  /** The name's words joined by single spaces: what an exact name match compares. */
  get nameKey(): string {
    return (this.key ??= this.nameWords.join(" "));
  }
}

export interface ResolverIndex {
  sha: string;
  docs: IndexedDoc[];
  byIdentity: IdentityIndex;
  byWord: Map<string, number[]>;
  byStem: Map<string, number[]>;
  children: Map<string, number[]>;
  types: Set<string>;
  buildMs: number;
  names: NameWords;
  /** Built on first use; see `lazy*` below. */
  lazy: {
    skeleton?: { bySkeleton: Map<string, number[]>; ms: number };
    typo?: {
      /** Name words by the keys they become with one letter deleted. */
      deletes: DeletionIndex;
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
 * Postings keyed by a function of the name words (their stem, their skeleton): the union of the
 * postings of the words with that key, sorted (membership is a binary search) and free of
 * duplicates, keys in order of first sight. A key of one word shares that word's list; the lists
 * of keys of several words come from one pass over the documents' word ids, in document order —
 * sorted and deduplicated as they are written, with no merge.
 */
function regroup(names: NameWords, key: (w: string) => string): Map<string, number[]> {
  const { vocab, start, ids, postings } = names;
  const keyIds = new Map<string, number>();
  const keys: string[] = [];
  const firstWord: number[] = [];
  const wordCount: number[] = [];
  const keyOf = new Int32Array(postings.length);
  for (let w = 0; w < postings.length; w++) {
    const k = key(vocab.strings[w]!);
    let g = keyIds.get(k);
    if (g === undefined) {
      g = keys.length;
      keyIds.set(k, g);
      keys.push(k);
      firstWord.push(w);
      wordCount.push(1);
    } else wordCount[g]!++;
    keyOf[w] = g;
  }
  const lists: number[][] = new Array(keys.length);
  let shared = false;
  for (let g = 0; g < keys.length; g++) {
    if (wordCount[g] === 1) lists[g] = postings[firstWord[g]!]!;
    else {
      lists[g] = [];
      shared = true;
    }
  }
  if (shared)
    for (let i = 0; i + 1 < start.length; i++)
      for (let j = start[i]!; j < start[i + 1]!; j++) {
        const g = keyOf[ids[j]!]!;
        if (wordCount[g] === 1) continue;
        const p = lists[g]!;
        if (p[p.length - 1] !== i) p.push(i);
      }
  const out = new Map<string, number[]>();
  for (let g = 0; g < keys.length; g++) out.set(keys[g]!, lists[g]!);
  return out;
}

/** The text `contentText` folds: string leaves of a document's content, up to `limit` characters. */
function contentRaw(content: Record<string, unknown>, limit: number): string {
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
  if (isFlat) return flat.length > limit ? flat.slice(0, limit) : flat;
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
  return out.join(" ").slice(0, limit);
}

/** String leaves of a document's content, folded — the weak "content mention" signal reads these. */
export function contentText(content: Record<string, unknown>, limit = 600): string {
  return fold(contentRaw(content, limit));
}

export function buildIndex(snapshot: WorkspaceSnapshot, sha: string): ResolverIndex {
  const t0 = performance.now();
  const docs = snapshot.documents;
  const names: NameWords = {
    vocab: new Vocabulary(),
    start: new Int32Array(docs.length + 1),
    ids: new Int32Array(0),
    postings: [],
  };
  const indexed: IndexedDoc[] = new Array(docs.length);
  const idx: ResolverIndex = {
    sha,
    docs: indexed,
    byIdentity: new IdentityIndex((i) => indexed[i]!.identityKey, docs.length),
    byWord: new Map(),
    byStem: new Map(),
    children: new Map(),
    types: new Set(),
    buildMs: 0,
    names,
    lazy: {},
  };
  const ids = new IntList();
  const postings = names.postings;
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]!;
    names.start[i] = ids.length;
    foldedWordIds(doc.displayName, names.vocab, ids);
    for (let j = names.start[i]!; j < ids.length; j++) {
      // Ids are dense and first seen here in order: a new word is the next element.
      const w = ids.data[j]!;
      if (w === postings.length) postings.push([i]);
      else {
        const p = postings[w]!;
        if (p[p.length - 1] !== i) p.push(i);
      }
    }
    const identityKey = fold(doc.identity);
    idx.docs[i] = new IndexedDoc(doc, identityKey, names, i);
    idx.types.add(doc.documentType);
    idx.byIdentity.set(identityKey, i);
    if (doc.folderIdentity) push(idx.children, doc.folderIdentity, i);
  }
  names.start[docs.length] = ids.length;
  names.ids = ids.data;
  for (let w = 0; w < postings.length; w++) idx.byWord.set(names.vocab.strings[w]!, postings[w]!);
  // Stems per distinct word, not per occurrence: 21k stem lookups instead of 250k at 100k docs.
  idx.byStem = regroup(names, stem);
  idx.buildMs = performance.now() - t0;
  return idx;
}

/** Transliteration skeletons of every name (first Latin-script mention). */
export function skeletonIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["skeleton"]> {
  if (idx.lazy.skeleton) return idx.lazy.skeleton;
  const t0 = performance.now();
  const bySkeleton = regroup(idx.names, skeletonWord);
  return (idx.lazy.skeleton = { bySkeleton, ms: performance.now() - t0 });
}

/** SymSpell deletions of the name vocabulary (first mention with a word the vocabulary lacks). */
export function typoIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["typo"]> {
  if (idx.lazy.typo) return idx.lazy.typo;
  const t0 = performance.now();
  const { vocab, postings } = idx.names;
  const deletes = new DeletionIndex(vocab, postings.length);
  const vocabByFirst = new Map<string, string[]>();
  for (let w = 0; w < postings.length; w++) {
    const word = vocab.strings[w]!;
    if (word.length < TYPO_MIN_LENGTH) continue;
    const b = vocabByFirst.get(word[0]!);
    if (b) b.push(word);
    else vocabByFirst.set(word[0]!, [word]);
  }
  return (idx.lazy.typo = { deletes, vocabByFirst, memo: new Map(), ms: performance.now() - t0 });
}

/** Stems of content words (first mention that no name matches: suggestions only). */
export function contentIndex(idx: ResolverIndex): NonNullable<ResolverIndex["lazy"]["content"]> {
  if (idx.lazy.content) return idx.lazy.content;
  const t0 = performance.now();
  // Content words (longer than 3) interned as they are read, each distinct word stemmed once;
  // documents are read in order, so each stem's list is sorted and deduplicated as it is written.
  const vocab = new Vocabulary();
  const ids = new IntList();
  const stemOf: number[] = [];
  const stemIds = new Map<string, number>();
  const lists: number[][] = [];
  const byContentStem = new Map<string, number[]>();
  for (let i = 0; i < idx.docs.length; i++) {
    ids.length = 0;
    foldedWordIds(contentRaw(idx.docs[i]!.doc.content ?? {}, 600), vocab, ids, 3);
    for (let j = 0; j < ids.length; j++) {
      const w = ids.data[j]!;
      let s: number;
      if (w < stemOf.length) s = stemOf[w]!;
      else {
        const k = stem(vocab.strings[w]!);
        const known = stemIds.get(k);
        if (known === undefined) {
          s = lists.length;
          stemIds.set(k, s);
          lists.push([]);
          byContentStem.set(k, lists[s]!);
        } else s = known;
        stemOf.push(s);
      }
      const p = lists[s]!;
      if (p[p.length - 1] !== i) p.push(i);
    }
  }
  return (idx.lazy.content = { byContentStem, ms: performance.now() - t0 });
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

/** The cached index of a snapshot, if one was built (never builds: a checker only reads what the turn resolved against). */
export function peekIndex(sha: string): ResolverIndex | undefined {
  return cache.get(sha);
}

/** Whether a document of the index bears this name (words compared by stem: «Доставки за месяц» ~ «доставок за месяц»). */
export function hasDocumentNamed(idx: ResolverIndex, name: string): boolean {
  const ws = words(fold(name));
  if (!ws.length) return false;
  const key = ws.map(stem).join(" ");
  const candidates = idx.byStem.get(stem(ws[0]!)) ?? [];
  return candidates.some((i) => idx.docs[i]!.nameWords.map(stem).join(" ") === key);
}
