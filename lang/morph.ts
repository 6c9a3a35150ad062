// Russian morphology for the answer check: the `az` package (OpenCorpora dictionaries, the
// pymorphy2 format) tags a word with its part of speech, aspect, tense, person, voice and mood —
// what decides whether a clause claims a completed change (claims.ts). The dictionaries (11 MB)
// are loaded once, synchronously, on first use: stage 12 runs inside a synchronous stream gate,
// and `Az.Morph.init` only has a callback form, so its file reader is swapped for a synchronous
// one whose callbacks run after init has counted every file. Measured on the team machine (Node
// 24): ~230 ms and ~60 MB RSS once per process; a parse is then a few microseconds and is cached.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** One reading of a word: its grammemes (OpenCorpora names) and its dictionary form. */
export interface Reading {
  pos: string;
  lemma: string;
  /** Every grammeme of the tag: "perf", "past", "pssv", "1per", "impr", "nomn", "plur"… */
  tags: ReadonlySet<string>;
  score: number;
  /** Found in the dictionary (not predicted from the word's ending). */
  known: boolean;
}

interface AzTag {
  POS?: string;
  toString(): string;
}
interface AzParse {
  tag: AzTag;
  score: number;
  parser?: string;
  typosCnt?: number;
  /** What a prefix parser cut off («пере» of «пересобрал», read by «собрал»). */
  prefix?: string;
  normalize(): { word: string } | undefined;
}
interface AzModule {
  load: (url: string, type: string, cb: (err: unknown, data?: unknown) => void) => void;
  Morph: ((word: string, config?: { typos?: number }) => AzParse[]) & {
    init: (path: string, cb: (err: unknown) => void) => void;
  };
}

const require = createRequire(import.meta.url);
let az: AzModule | undefined;
let loadStats: { ms: number; rssMb: number } | undefined;

function load(): AzModule {
  if (az) return az;
  const t0 = performance.now();
  const rss0 = process.memoryUsage().rss;
  const mod = require("az") as AzModule;
  const dicts = join(dirname(require.resolve("az/package.json")), "dicts");
  const queued: Array<() => void> = [];
  const original = mod.load;
  mod.load = (url, type, cb) =>
    queued.push(() => {
      const data = readFileSync(url);
      if (type === "json") cb(null, JSON.parse(data.toString("utf8")));
      else cb(null, data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
    });
  let failure: unknown;
  try {
    mod.Morph.init(dicts, (err) => {
      if (err) failure = err;
    });
    while (queued.length) queued.shift()!();
  } finally {
    mod.load = original;
  }
  if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
  loadStats = { ms: performance.now() - t0, rssMb: (process.memoryUsage().rss - rss0) / 1e6 };
  az = mod;
  return mod;
}

/** How long the dictionaries took to load and what they cost (undefined before the first parse). */
export const morphLoadStats = () => loadStats;

const cache = new Map<string, Reading[]>();
const typoCache = new Map<string, Reading[]>();
const CACHE_LIMIT = 50_000;

const toReading =
  (w: string) =>
  (p: AzParse): Reading => {
    const tags = new Set(p.tag.toString().split(/[ ,]/));
    return {
      pos: p.tag.POS ?? [...tags][0] ?? "",
      // a word read by a known word with a prefix cut off keeps the prefix: «пере-» is doing again
      lemma:
        (p.parser?.startsWith("Prefix") && p.prefix ? p.prefix : "") + (p.normalize()?.word ?? w).replace(/ё/g, "е"),
      tags,
      score: p.score,
      known: p.parser === "Dictionary",
    };
  };

function remember(c: Map<string, Reading[]>, w: string, out: Reading[]): Reading[] {
  if (c.size >= CACHE_LIMIT) c.clear();
  c.set(w, out);
  return out;
}

/** The readings of one word, most likely first (lower-cased, ё kept: the dictionary knows it). */
export function readings(word: string): Reading[] {
  const w = word.toLowerCase();
  return cache.get(w) ?? remember(cache, w, load().Morph(w).map(toReading(w)));
}

/**
 * Dictionary readings of the words one typo away (a letter missing, extra, swapped or a neighbour
 * on the keyboard): a misspelt word still means what it was meant to. Slower (~2 ms), so callers
 * ask only for words that may be a misspelt form of a word they care about.
 */
export function typoReadings(word: string): Reading[] {
  const w = word.toLowerCase();
  return (
    typoCache.get(w) ??
    remember(
      typoCache,
      w,
      load()
        .Morph(w, { typos: 1 })
        .filter((p) => p.parser === "Dictionary" && (p.typosCnt ?? 0) > 0)
        .map(toReading(w)),
    )
  );
}

/** The most likely reading (az sorts by likelihood), or undefined for a word it cannot parse. */
export const bestReading = (word: string): Reading | undefined => readings(word)[0];

/** The dictionary form of a word by its most likely reading (the word itself when unknown). */
export const lemmaOf = (word: string): string => bestReading(word)?.lemma ?? word.toLowerCase();
