import { randomFillSync } from "node:crypto";

/** Two hex digits per byte value. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * Random bytes drawn from the CSPRNG in one block and handed out ten per id, as
 * `crypto.randomUUID` caches its own: a call into the generator per id (randomBytes(16)) was
 * about 0.6 % of a turn's CPU in the peer-harness profile (issue 46), a block of 4 KiB costs
 * about the same once per 409 ids.
 */
const pool = Buffer.alloc(4096);
let used = pool.length;

function take10(): number {
  if (used + 10 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const at = used;
  used += 10;
  return at;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Rows keyed by
 * such ids (runs, conversations) go in at the right end of their B-tree indexes instead of at
 * random leaves, so a turn's index entries land on the few pages recent turns already touched:
 * after a checkpoint those pages cost one full-page image for many turns, not one each (WAL per
 * turn, issue 19). Still a UUID in form, so clients that treat ids as opaque strings see no change.
 */
export function uuidv7(now: number = Date.now()): string {
  const r = take10();
  // 48 bits of milliseconds: the high 16 and the low 32 (bit operations are 32-bit in JavaScript).
  const hi = Math.floor(now / 0x1_0000_0000);
  const lo = now >>> 0;
  const ts =
    HEX[(hi >>> 8) & 0xff]! +
    HEX[hi & 0xff]! +
    HEX[lo >>> 24]! +
    HEX[(lo >>> 16) & 0xff]! +
    "-" +
    HEX[(lo >>> 8) & 0xff]! +
    HEX[lo & 0xff]!;
  const b = pool;
  return (
    ts +
    "-" +
    HEX[(b[r]! & 0x0f) | 0x70]! +
    HEX[b[r + 1]!]! +
    "-" +
    HEX[(b[r + 2]! & 0x3f) | 0x80]! +
    HEX[b[r + 3]!]! +
    "-" +
    HEX[b[r + 4]!]! +
    HEX[b[r + 5]!]! +
    HEX[b[r + 6]!]! +
    HEX[b[r + 7]!]! +
    HEX[b[r + 8]!]! +
    HEX[b[r + 9]!]!
  );
}
