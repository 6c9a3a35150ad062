// Documents by folded identity. At 100k documents a Map<string, number> is ~3.6 MB of entries on
// the JS heap (twice that allocated while it grows), copied by every young-generation GC of the
// build; this open-addressing table is two typed arrays off the heap, and the keys are the
// documents' own identityKey strings.
import { mix, SEED } from "./resolve-vocab";

function hashOf(s: string): number {
  let h = SEED;
  for (let j = 0; j < s.length; j++) h = mix(h, s.charCodeAt(j));
  return h;
}

/** `get`/`has`/`size`/iteration like the Map it replaces: a key set twice keeps its first place and takes the last document. */
export class IdentityIndex {
  /** Slot s: table[3s] = latest document + 1 (0 is empty), table[3s + 1] = hash, table[3s + 2] = first document. */
  private readonly table: Int32Array;
  private readonly mask: number;
  private count = 0;

  constructor(
    private readonly keyOf: (i: number) => string,
    capacity: number,
  ) {
    let size = 1024;
    while (size < capacity * 2) size *= 2;
    this.table = new Int32Array(3 * size);
    this.mask = size - 1;
  }

  set(key: string, i: number): void {
    const h = hashOf(key);
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const e = this.table[3 * slot]!;
      if (e === 0) {
        this.table[3 * slot] = i + 1;
        this.table[3 * slot + 1] = h;
        this.table[3 * slot + 2] = i;
        this.count++;
        return;
      }
      if (this.table[3 * slot + 1] === h && this.keyOf(e - 1) === key) {
        this.table[3 * slot] = i + 1;
        return;
      }
    }
  }

  get(key: string): number | undefined {
    const h = hashOf(key);
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const e = this.table[3 * slot]!;
      if (e === 0) return undefined;
      if (this.table[3 * slot + 1] === h && this.keyOf(e - 1) === key) return e - 1;
    }
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    return this.count;
  }

  /** [key, document] in the order the keys were first set. */
  *[Symbol.iterator](): Generator<[string, number]> {
    const firsts: number[] = [];
    for (let s = 0; s < this.table.length; s += 3) if (this.table[s] !== 0) firsts.push(s);
    firsts.sort((a, b) => this.table[a + 2]! - this.table[b + 2]!);
    for (const s of firsts) yield [this.keyOf(this.table[s]! - 1), this.table[s]! - 1];
  }
}
