import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compact, compactMeta, expand, metaTemplate, registerMetaTemplate } from "../../storage/meta-defaults";

let named = 0;
/** A template under a name of its own (a registered name never changes meaning). */
const template = (fields: Record<string, unknown>) => registerMetaTemplate(`test.t${named++}`, fields);

// Few keys and values, so objects and templates share them often; "1" is put first by JS objects
// whatever the order it was given in, "__proto__" must stay a plain key.
const key = fc.constantFrom("a", "b", "c", "d", "e", "1", "__proto__");
const value = fc.constantFrom<unknown>(null, 0, 1, "", "x", false, [], {}, { a: 1, b: 2 }, { b: 2, a: 1 }, [null]);
const obj = fc
  .uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: 7 })
  .map((e) => Object.fromEntries(e));
/** A template: its keys in some order, each with a default or none (undefined: it only fixes a place). */
const fields = fc
  .uniqueArray(fc.tuple(key, fc.option(value, { nil: undefined })), { selector: ([k]) => k, maxLength: 7 })
  .map((e) => Object.fromEntries(e));
/**
 * A template and a value shaped like the ones stored under it: most of its keys, many holding their
 * defaults, other keys among them, sometimes in another order — or any object at all.
 */
const templateAndValue = fields.chain((f) => {
  const keys = Object.keys(f);
  const shaped = fc
    .tuple(
      fc.array(fc.tuple(fc.nat(7), fc.boolean(), value), { minLength: keys.length, maxLength: keys.length }),
      fc.array(fc.tuple(fc.nat(), key, value), { maxLength: 3 }),
      fc.option(fc.func(fc.integer()), { freq: 4 }),
    )
    .map(([picks, extras, shuffle]) => {
      const entries: [string, unknown][] = [];
      keys.forEach((k, i) => {
        const [keep, isDefault, v] = picks[i]!;
        if (keep > 0 || isDefault) entries.push([k, isDefault && f[k] !== undefined ? f[k] : v]);
      });
      for (const [at, k, v] of extras)
        if (!entries.some(([e]) => e === k)) entries.splice(at % (entries.length + 1), 0, [k, v]);
      if (shuffle) entries.sort(([a], [b]) => shuffle(a) - shuffle(b));
      return Object.fromEntries(entries);
    });
  return fc.tuple(fc.constant(f), fc.oneof(shaped, shaped, shaped, obj));
});

describe("meta templates (storage/meta-defaults.ts)", () => {
  const state = template({ branch: undefined, step: null, count: 0, suspended: null });

  it("leaves out the fields that hold their defaults and puts them back in their places", () => {
    const whole = { branch: "booking", step: "close", count: 0, suspended: null };
    const c = compact(state, whole);
    expect(c).toEqual({ branch: "booking", step: "close" });
    expect(JSON.stringify(expand(state, c))).toBe(JSON.stringify(whole));
    // A non-default between defaults: the defaults go back before and after it.
    const mid = { branch: "booking", step: null, count: 2, suspended: null };
    expect(compact(state, mid)).toEqual({ branch: "booking", count: 2 });
    expect(JSON.stringify(expand(state, compact(state, mid)))).toBe(JSON.stringify(mid));
    // A default compared as JSON: {} is not null, 0 is not "0".
    expect(compact(state, { branch: "b", step: {}, count: "0", suspended: null })).toEqual({
      branch: "b",
      step: {},
      count: "0",
    });
  });

  it("stores whole what would not read back as the same text, and reads a whole value as it is", () => {
    // Another key order than the template's: putting the default back elsewhere would change the text.
    expect(compact(state, { count: 0, branch: "b", step: "s", suspended: null })).toBeNull();
    // A value without one of the defaulted keys: expanding would add it.
    expect(compact(state, { branch: "b", count: 0 })).toBeNull();
    // Nothing to leave out, or not an object.
    expect(compact(state, { branch: "b", step: "s", count: 1, suspended: {} })).toBeNull();
    for (const v of [null, [], "s", 3]) expect(compact(state, v)).toBeNull();
    const old = { count: 0, branch: "b", step: null, suspended: null, extra: 1 };
    expect(JSON.stringify(expand(state, old))).toBe(JSON.stringify(old));
    expect(() => expand(state, "x")).toThrow(/must be an object/);
  });

  it("property: whenever a value is stored compact it expands to the same JSON text, and is shorter", () => {
    let applied = 0;
    fc.assert(
      fc.property(templateAndValue, ([f, x]) => {
        const t = template(f);
        const c = compact(t, x);
        if (c === null) return;
        applied++;
        expect(JSON.stringify(expand(t, c))).toBe(JSON.stringify(x));
        expect(JSON.stringify(c).length).toBeLessThan(JSON.stringify(x).length);
      }),
      { numRuns: 2000 },
    );
    // Not a vacuous pass: about a fifth of the generated values are stored compact.
    expect(applied).toBeGreaterThan(200);
  });

  it("property: a value stored whole (every defaulted key present) expands to itself", () => {
    fc.assert(
      fc.property(fields, obj, (f, x) => {
        const t = template(f);
        const whole = { ...Object.fromEntries([...t.defaults.keys()].map((k) => [k, null])) };
        const v = Object.fromEntries([
          ...Object.entries(x),
          ...Object.entries(whole).filter(([k]) => !Object.hasOwn(x, k)),
        ]);
        expect(JSON.stringify(expand(t, v))).toBe(JSON.stringify(v));
      }),
    );
  });

  it("property: a value with the template's keys in its order (and maybe fields it does not know after them) is stored compact whenever one holds its default", () => {
    const unknown = fc.uniqueArray(fc.tuple(fc.constantFrom("x", "y", "z"), value), {
      selector: ([k]) => k,
      maxLength: 2,
    });
    fc.assert(
      fc.property(
        fields,
        fc.infiniteStream(value),
        fc.infiniteStream(fc.boolean()),
        unknown,
        (f, values, keep, more) => {
          const t = template(f);
          const v = Object.fromEntries([
            ...t.keys.map((k) => {
              const d = t.defaults.get(k);
              return [k, d !== undefined && keep.next().value ? JSON.parse(d) : values.next().value];
            }),
            ...more,
          ]);
          const c = compact(t, v);
          const anyDefault = t.keys.some((k) => t.defaults.get(k) === JSON.stringify(v[k]));
          expect(c !== null).toBe(anyDefault);
          if (c) expect(JSON.stringify(expand(t, c))).toBe(JSON.stringify(v));
        },
      ),
    );
  });

  it("compactMeta compacts the named fields that it can, and says which", () => {
    const meta = { state: { branch: "b", step: null, count: 0, suspended: null }, events: [], other: { count: 0 } };
    const stored = compactMeta(meta, { state, other: state });
    expect(stored.meta).toEqual({ state: { branch: "b" }, events: [], other: { count: 0 } });
    expect(Object.keys(stored.meta)).toEqual(["state", "events", "other"]);
    expect(stored.compact).toEqual({ state: state.name });
    expect(compactMeta({ events: [] }, { state })).toEqual({ meta: { events: [] }, compact: {} });
  });

  it("a name keeps its template: the same again is a no-op, other fields are refused; an unknown name fails naming it", () => {
    expect(template({ x: 0 }).name).toMatch(/^test\.t/);
    const name = `test.t${named - 1}`;
    expect(registerMetaTemplate(name, { x: 0 })).toBe(metaTemplate(name));
    expect(() => registerMetaTemplate(name, { x: 1 })).toThrow(/already registered/);
    expect(() => registerMetaTemplate(name, { x: 0, y: 0 })).toThrow(/already registered/);
    expect(() => registerMetaTemplate("Bad Name", {})).toThrow(/meta template name/);
    expect(() => metaTemplate("nobody.state")).toThrow(/"nobody\.state" is not registered/);
  });

  it("the dialogue systems' list registers the clinic's template (what the server loads, main.ts)", async () => {
    // Nothing of the clinic is imported by this file until now.
    expect(() => metaTemplate("clinic.state")).toThrow(/not registered/);
    await import("../../systems");
    expect(metaTemplate("clinic.state").keys).toContain("handoffCount");
  });
});
