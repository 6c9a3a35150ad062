import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../storage/time-ordered-id";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("time-ordered ids (UUID version 7)", () => {
  it("are UUIDs of version 7 and RFC 9562's variant, distinct, carrying their millisecond", () => {
    const ids = Array.from({ length: 1000 }, () => uuidv7(1_733_300_000_123));
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(new Set(ids).size).toBe(ids.length);
    expect(parseInt(ids[0]!.replace(/-/g, "").slice(0, 12), 16)).toBe(1_733_300_000_123);
  });

  it("sort as text by their millisecond", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), fc.integer({ min: 1, max: 2 ** 20 }), (t, dt) => {
        const a = uuidv7(t);
        const b = uuidv7(t + dt);
        expect(a < b).toBe(true);
      }),
    );
  });
});
