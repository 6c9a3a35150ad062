import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { plainClone } from "../../../systems/clinic/plain-clone";

describe("plainClone", () => {
  it("copies any JSON value as structuredClone does, sharing nothing with the original", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const copy = plainClone(v);
        expect(copy).toStrictEqual(structuredClone(v));
        expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
        if (typeof v === "object" && v !== null) expect(copy).not.toBe(v);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps undefined fields and a __proto__ key as own keys, and changing the copy leaves the original", () => {
    const original = JSON.parse('{"slots":{"__proto__":{"polluted":true},"name":"Анна"},"list":[1,{"a":null}]}');
    const withUndefined = { ...original, reply: undefined };
    const copy = plainClone(withUndefined);
    expect(Object.hasOwn(copy, "reply")).toBe(true);
    expect(Object.keys(copy.slots)).toEqual(["__proto__", "name"]);
    expect(Object.getPrototypeOf(copy.slots)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(copy).toStrictEqual(structuredClone(withUndefined));
    copy.slots.name = "Борис";
    copy.list[1].a = 1;
    expect(original.slots.name).toBe("Анна");
    expect(original.list[1].a).toBeNull();
  });
});
