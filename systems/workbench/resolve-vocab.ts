// The resolver index's word interning. A 100k-document workspace has ~650k word occurrences
// (names and content) but only ~20k distinct words: reading the words straight from the raw text
// by character code and interning them gives each distinct word one string and one integer id,
// instead of a lower-cased copy of every text, a split array and a fresh string per occurrence
// that the index then has to hash and keep.
import { fold, words } from "./text";

/**
 * `fold`'s form of each character of the "stable" range (ASCII and the basic Cyrillic block,
 * U+0400–U+045F), 0 for the characters that are not word characters. For text made only of
 * these, `words(fold(text))` is exactly: the maximal runs of letters and digits, each lower-cased
 * with ё → е. Unicode normalization leaves this range unchanged, lower-casing maps it into itself
 * one character for one, every Cyrillic character in it is a letter and the ASCII letters and
 * digits are the only other `\p{L}\p{N}` in it — so the scanner below needs no regex, no
 * normalization and no copy of the text.
 */
const FOLDED = new Uint16Array(0x460);
for (let c = 0x30; c <= 0x39; c++) FOLDED[c] = c;
for (let c = 0x61; c <= 0x7a; c++) FOLDED[c] = c;
for (let c = 0x41; c <= 0x5a; c++) FOLDED[c] = c + 0x20;
for (let c = 0x400; c <= 0x45f; c++) {
  const lower = c >= 0x410 && c <= 0x42f ? c + 0x20 : c <= 0x40f ? c + 0x50 : c;
  FOLDED[c] = lower === 0x451 ? 0x435 : lower; // ё → е
}

export const SEED = 0x811c9dc5;
export function mix(h: number, c: number): number {
  h = Math.imul(h ^ c, 0x5bd1e995);
  return h ^ (h >>> 15);
}

/**
 * Distinct words with dense ids (0, 1, 2… in order of first sight). An open-addressing table
 * holds each word's id and hash side by side, and the words' characters sit in one array: a word
 * read from a slice of a text is found (or added) without making its string first, and a lookup
 * touches two typed arrays rather than a Map entry and a string object (at 650k lookups per
 * 100k-document build, the memory reads are most of the cost).
 */
export class Vocabulary {
  /** The words, by id. */
  readonly strings: string[] = [];
  /** Word id's characters are chars[offsets[id] .. offsets[id + 1]). */
  chars = new Uint16Array(1 << 14);
  offsets = new Int32Array(1024);
  private charsLength = 0;
  /** Slot s: table[2s] = id + 1 (0 is empty), table[2s + 1] = the word's hash. */
  private table = new Int32Array(2 * 2048);
  private mask = 2047;

  get size(): number {
    return this.strings.length;
  }

  /** The id of a word given as a string (already folded: taken character for character). */
  intern(w: string): number {
    let h = SEED;
    for (let j = 0; j < w.length; j++) h = mix(h, w.charCodeAt(j));
    const table = this.table;
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const e = table[2 * slot]!;
      if (e === 0) return this.add(slot, h, w);
      if (table[2 * slot + 1] === h && this.strings[e - 1] === w) return e - 1;
    }
  }

  /** The id of `fold`'s form of text[start, end), a run of stable word characters whose hash is `h`. */
  internFolded(text: string, start: number, end: number, h: number): number {
    const len = end - start;
    const { table, offsets, chars } = this;
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const e = table[2 * slot]!;
      if (e === 0) {
        let w = text.slice(start, end).toLowerCase();
        if (w.includes("ё")) w = w.replace(/ё/g, "е");
        return this.add(slot, h, w);
      }
      if (table[2 * slot + 1] !== h) continue;
      const o = offsets[e - 1]!;
      if (offsets[e]! - o !== len) continue;
      let j = 0;
      while (j < len && chars[o + j] === FOLDED[text.charCodeAt(start + j)]) j++;
      if (j === len) return e - 1;
    }
  }

  private add(slot: number, h: number, w: string): number {
    const id = this.strings.length;
    this.strings.push(w);
    if (this.charsLength + w.length > this.chars.length) {
      const grown = new Uint16Array(Math.max(this.chars.length * 2, this.charsLength + w.length));
      grown.set(this.chars);
      this.chars = grown;
    }
    for (let j = 0; j < w.length; j++) this.chars[this.charsLength++] = w.charCodeAt(j);
    if (id + 2 > this.offsets.length) {
      const grown = new Int32Array(this.offsets.length * 2);
      grown.set(this.offsets);
      this.offsets = grown;
    }
    this.offsets[id + 1] = this.charsLength;
    this.table[2 * slot] = id + 1;
    this.table[2 * slot + 1] = h;
    if ((id + 1) * 2 > this.mask + 1) this.rehash();
    return id;
  }

  private rehash(): void {
    const old = this.table;
    const size = (this.mask + 1) * 2;
    const table = new Int32Array(2 * size);
    const mask = size - 1;
    for (let s = 0; s < old.length; s += 2) {
      if (old[s] === 0) continue;
      let slot = old[s + 1]! & mask;
      while (table[2 * slot] !== 0) slot = (slot + 1) & mask;
      table[2 * slot] = old[s]!;
      table[2 * slot + 1] = old[s + 1]!;
    }
    this.table = table;
    this.mask = mask;
  }
}

/** A growable list of 32-bit integers (word ids of every indexed text, one after another). */
export class IntList {
  data = new Int32Array(1024);
  length = 0;

  push(x: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = x;
  }
}

// Word runs of the text being read: start, end and hash of each (a text has few words; grown if not).
let runs = new Int32Array(3 * 256);

/**
 * Appends to `out` the ids of `words(fold(text))` (only words longer than `minLength`), interned in
 * `vocab`. Stable text is read character by character; any other text takes `fold` and `words`
 * themselves, so the words are the same either way. A text is read whole before any of its words
 * is interned: one that turns out not to be stable adds nothing the slow path would not.
 */
export function foldedWordIds(text: string, vocab: Vocabulary, out: IntList, minLength = 0): void {
  const n = text.length;
  let k = 0;
  let h = SEED;
  let start = -1;
  for (let j = 0; j <= n; j++) {
    const c = j < n ? text.charCodeAt(j) : 0x20;
    if (c >= 0x460 || (c >= 0x80 && c < 0x400)) {
      for (const w of words(fold(text))) if (w.length > minLength) out.push(vocab.intern(w));
      return;
    }
    const f = FOLDED[c]!;
    if (f !== 0) {
      if (start < 0) {
        start = j;
        h = SEED;
      }
      h = mix(h, f);
    } else if (start >= 0) {
      if (j - start > minLength) {
        if (k + 3 > runs.length) {
          const grown = new Int32Array(runs.length * 2);
          grown.set(runs);
          runs = grown;
        }
        runs[k++] = start;
        runs[k++] = j;
        runs[k++] = h;
      }
      start = -1;
    }
  }
  for (let r = 0; r < k; r += 3) out.push(vocab.internFolded(text, runs[r]!, runs[r + 1]!, runs[r + 2]!));
}
