// SymSpell deletions of the name vocabulary (distance 1): for every word of 5+ letters, the words
// it becomes with one letter deleted, each mapped back to the words that produce it. At 100k
// documents that is ~157k keys — kept as integer tables over the vocabulary's characters instead
// of a Map of 157k new strings: a key is stored as (word, deleted position), never spelled out.
import { mix, SEED, type Vocabulary } from "./resolve-vocab";

export const TYPO_MIN_LENGTH = 5;

export class DeletionIndex {
  /** Keys in order of first sight: the word and position that spell the key, its hash, its list. */
  private keyWord: Int32Array;
  private keyPos: Int32Array;
  private keyHash: Int32Array;
  private keyHead: Int32Array;
  private keyTail: Int32Array;
  private keys = 0;
  /** Lists of word ids, in vocabulary order: entry e holds entryWord[e], then entry entryNext[e] (-1 ends). */
  private entryWord: Int32Array;
  private entryNext: Int32Array;
  private entries = 0;
  /** Open addressing: key id + 1, 0 is empty. */
  private table: Int32Array;
  private mask: number;

  /** Indexes the vocabulary's words `0 .. words - 1` of at least TYPO_MIN_LENGTH letters, in id order. */
  constructor(
    private readonly vocab: Vocabulary,
    words: number,
  ) {
    const { chars, offsets } = vocab;
    let total = 0;
    for (let w = 0; w < words; w++) {
      const len = offsets[w + 1]! - offsets[w]!;
      if (len >= TYPO_MIN_LENGTH) total += len;
    }
    this.keyWord = new Int32Array(total);
    this.keyPos = new Int32Array(total);
    this.keyHash = new Int32Array(total);
    this.keyHead = new Int32Array(total);
    this.keyTail = new Int32Array(total);
    this.entryWord = new Int32Array(total);
    this.entryNext = new Int32Array(total);
    let size = 1024;
    while (size < total * 2) size *= 2;
    this.table = new Int32Array(size);
    this.mask = size - 1;
    for (let w = 0; w < words; w++) {
      const o = offsets[w]!;
      const len = offsets[w + 1]! - o;
      if (len < TYPO_MIN_LENGTH) continue;
      for (let p = 0; p < len; p++) {
        // Deleting either of two equal neighbours spells the same key: post the word once.
        if (p > 0 && chars[o + p] === chars[o + p - 1]) continue;
        let h = SEED;
        for (let j = 0; j < len; j++) if (j !== p) h = mix(h, chars[o + j]!);
        this.post(w, p, h);
      }
    }
  }

  /** Adds word w to the list of the key "w without its letter p" (hash h). */
  private post(w: number, p: number, h: number): void {
    const { chars, offsets } = this.vocab;
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const k1 = this.table[slot]!;
      if (k1 === 0) {
        const k = this.keys++;
        this.table[slot] = k + 1;
        this.keyWord[k] = w;
        this.keyPos[k] = p;
        this.keyHash[k] = h;
        this.keyHead[k] = this.keyTail[k] = this.newEntry(w);
        return;
      }
      const k = k1 - 1;
      if (this.keyHash[k] !== h || !this.sameKey(k, chars, offsets[w]!, offsets[w + 1]!, p)) continue;
      // Words are posted in id order, each once per key: the list's tail is the only possible duplicate.
      if (this.entryWord[this.keyTail[k]!] === w) return;
      const e = this.newEntry(w);
      this.entryNext[this.keyTail[k]!] = e;
      this.keyTail[k] = e;
      return;
    }
  }

  private newEntry(w: number): number {
    const e = this.entries++;
    this.entryWord[e] = w;
    this.entryNext[e] = -1;
    return e;
  }

  /** Whether key k is spelled src[from .. to) without the letter at position `skip` (-1: none). */
  private sameKey(k: number, src: ArrayLike<number>, from: number, to: number, skip: number): boolean {
    const { chars, offsets } = this.vocab;
    const w = this.keyWord[k]!;
    const kp = this.keyPos[k]!;
    const o = offsets[w]!;
    const len = offsets[w + 1]! - o - 1;
    if (to - from - (skip < 0 ? 0 : 1) !== len) return false;
    let a = o;
    let b = from;
    for (let j = 0; j < len; j++, a++, b++) {
      if (a === o + kp) a++;
      if (b === from + skip) b++;
      if (chars[a] !== src[b]) return false;
    }
    return true;
  }

  /** Ids of the words (in vocabulary order) that become `key` with one letter deleted. */
  wordsFor(key: string): number[] {
    let h = SEED;
    const codes = new Array<number>(key.length);
    for (let j = 0; j < key.length; j++) h = mix(h, (codes[j] = key.charCodeAt(j)));
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const k1 = this.table[slot]!;
      if (k1 === 0) return [];
      const k = k1 - 1;
      if (this.keyHash[k] !== h || !this.sameKey(k, codes, 0, codes.length, -1)) continue;
      const out: number[] = [];
      for (let e = this.keyHead[k]!; e !== -1; e = this.entryNext[e]!) out.push(this.entryWord[e]!);
      return out;
    }
  }

  /** Every key with its words, in order of first sight (for comparing with a plain Map). */
  *keyEntries(): Generator<[string, string[]]> {
    const { chars, offsets, strings } = this.vocab;
    for (let k = 0; k < this.keys; k++) {
      const w = this.keyWord[k]!;
      const o = offsets[w]!;
      const p = this.keyPos[k]!;
      const key = String.fromCharCode(...chars.subarray(o, o + p), ...chars.subarray(o + p + 1, offsets[w + 1]!));
      const ws: string[] = [];
      for (let e = this.keyHead[k]!; e !== -1; e = this.entryNext[e]!) ws.push(strings[this.entryWord[e]!]!);
      yield [key, ws];
    }
  }

  get size(): number {
    return this.keys;
  }
}
