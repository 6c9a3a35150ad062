import { randomBytes } from "node:crypto";

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Rows keyed by
 * such ids (runs, conversations) go in at the right end of their B-tree indexes instead of at
 * random leaves, so a turn's index entries land on the few pages recent turns already touched:
 * after a checkpoint those pages cost one full-page image for many turns, not one each (WAL per
 * turn, issue 19). Still a UUID in form, so clients that treat ids as opaque strings see no change.
 */
export function uuidv7(now: number = Date.now()): string {
  const b = randomBytes(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
