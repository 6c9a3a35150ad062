/**
 * A message meta's field stored without the fields that hold their defaults (issue 19: WAL per
 * turn) and read back whole, with the same JSON text. A system registers a named template — an
 * ordered object of default values — at module level, next to the code that writes the field;
 * `compact` leaves out what equals (as JSON) its default, `expand` puts it back in the template's
 * order. A value is stored compact only when expanding gives back exactly its JSON text, so the
 * rule holds for any shape or key order; otherwise it is stored whole (and a whole value expands
 * to itself: rows stored before read unchanged).
 *
 * A stored `final` names the template it was compacted with (storage/runs.ts), so a registered
 * template never changes meaning: a new shape is a new name, and the old one stays registered.
 */

export interface MetaTemplate {
  readonly name: string;
  /** The template's keys in order: where a left-out field goes back among the others. */
  readonly keys: readonly string[];
  /** Key → the JSON text of its default (keys registered with `undefined` only fix a place). */
  readonly defaults: ReadonlyMap<string, string>;
}

const templates = new Map<string, MetaTemplate>();

const NAME = /^[a-z][a-z0-9_.-]{0,63}$/;

/**
 * Registers `name` → the ordered `fields` (a field whose value is `undefined` has no default: it only
 * fixes its place). Registering the same template again is a no-op; another one under a name
 * already taken throws — rows stored under the name would read back differently.
 */
export function registerMetaTemplate(name: string, fields: Readonly<Record<string, unknown>>): MetaTemplate {
  if (!NAME.test(name)) throw new Error(`meta template name ${JSON.stringify(name)}: lower case, digits, ._-`);
  const entries = Object.entries(fields);
  const t: MetaTemplate = {
    name,
    keys: entries.map(([k]) => k),
    defaults: new Map(entries.filter(([, v]) => v !== undefined).map(([k, v]) => [k, JSON.stringify(v)])),
  };
  const known = templates.get(name);
  if (known) {
    if (JSON.stringify([...known.keys]) !== JSON.stringify(t.keys) || !sameDefaults(known, t))
      throw new Error(
        `meta template ${name} is already registered with other fields: a changed template needs a new name`,
      );
    return known;
  }
  templates.set(name, t);
  return t;
}

const sameDefaults = (a: MetaTemplate, b: MetaTemplate) =>
  a.defaults.size === b.defaults.size && [...a.defaults].every(([k, v]) => b.defaults.get(k) === v);

/** The registered template; throws naming it when no loaded module registered it. */
export function metaTemplate(name: string): MetaTemplate {
  const t = templates.get(name);
  if (!t)
    throw new Error(
      `meta template ${JSON.stringify(name)} is not registered: the module of the system that stores it registers it (is that system loaded in this process?)`,
    );
  return t;
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/**
 * `value` without its fields that hold their defaults, or null when that would not read back as
 * the same JSON text (or nothing is left out, or `value` is not an object): store `value` whole then.
 */
export function compact(t: MetaTemplate, value: unknown): Record<string, unknown> | null {
  if (!isRecord(value)) return null;
  const entries = Object.entries(value);
  const kept = entries.filter(([k, v]) => !(t.defaults.has(k) && JSON.stringify(v) === t.defaults.get(k)));
  if (kept.length === entries.length) return null;
  // Object.fromEntries defines own properties: a "__proto__" key stays a key.
  const out = Object.fromEntries(kept);
  return JSON.stringify(expand(t, out)) === JSON.stringify(value) ? out : null;
}

/**
 * A compact value whole: each left-out default goes back right after the closest field before it in
 * the template that the value holds (so a field appended to a value's shape, unknown to the
 * template, stays last), or, when it holds none, right before the closest one after it, or else
 * first — in the template's order. A value holding every default's key comes back as it is.
 */
export function expand(t: MetaTemplate, value: unknown): Record<string, unknown> {
  if (!isRecord(value)) throw new Error(`meta template ${t.name}: a compact value must be an object`);
  const missing = t.keys.filter((k) => t.defaults.has(k) && !Object.hasOwn(value, k));
  if (missing.length === 0) return value;
  const out: [string, unknown][] = Object.entries(value);
  const at = (k: string) => out.findIndex(([e]) => e === k);
  for (const k of missing) {
    const i = t.keys.indexOf(k);
    const before = t.keys.slice(0, i).findLastIndex((b) => at(b) >= 0);
    const after = before < 0 ? t.keys.slice(i + 1).find((a) => at(a) >= 0) : undefined;
    const pos = before >= 0 ? at(t.keys[before]!) + 1 : after !== undefined ? at(after) : 0;
    out.splice(pos, 0, [k, JSON.parse(t.defaults.get(k)!)]);
  }
  return Object.fromEntries(out);
}

/** A message meta's fields stored compact: field → the name of its template (as `compactMeta` found them). */
export type CompactFields = Readonly<Record<string, string>>;

/**
 * A meta as stored: each field of `fields` compact under its template when that applies, and
 * which ones were (a writer that refers to the meta names their templates; storage/runs.ts).
 */
export function compactMeta(
  meta: Record<string, unknown>,
  fields: Readonly<Record<string, MetaTemplate>>,
): { meta: Record<string, unknown>; compact: CompactFields } {
  const compacted: Record<string, string> = {};
  const stored = Object.fromEntries(
    Object.entries(meta).map(([k, v]) => {
      const t = Object.hasOwn(fields, k) ? fields[k] : undefined;
      const c = t ? compact(t, v) : null;
      if (!c) return [k, v];
      compacted[k] = t!.name;
      return [k, c];
    }),
  );
  return { meta: stored, compact: compacted };
}
