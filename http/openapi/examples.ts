/**
 * Examples and descriptions for the OpenAPI document's schemas (issue 45: almost no property had
 * an example, so a reference page or a generated client showed bare types). An example is built
 * from the JSON Schema the zod contract produces — a schema's own `examples` (zod `.meta`) or
 * `default` first, then its constraints (enum, const, format, minimum, minLength) and, for a
 * plain string, a value chosen by the property's name — so it always fits the schema (the tests
 * validate every one with ajv) and a new schema gets one without a list to keep. A component
 * without its own description is described by where the document uses it.
 */
type Json = Record<string, any>;

const UUID = "0192f3a4-5b6c-7d8e-9f01-23456789abcd";
const AT = "2026-12-07T09:30:00.000Z";

/** Plain strings by property name: what a reader would expect there, in the API's language. */
const BY_NAME: [RegExp, string][] = [
  [/^(thread|conversation|run|interaction)Id$|^id$/i, UUID],
  [/At$|^at$|time/i, AT],
  [/^text$|patientText|message$/i, "Какой у вас адрес?"],
  [/reply|answer/i, "Мы находимся по адресу: ул. Примерная, д. 10."],
  [/question/i, "Какую сущность вы имеете в виду?"],
  [/title|displayName|name$/i, "Адрес и часы работы"],
  [/phone/i, "+7 900 123-45-67"],
  [/operator|takenBy/i, "Анна"],
  [/reason/i, "patient_request"],
  [/tenant/i, "default"],
  [/code$/i, "general_info"],
  [/identity/i, "composition-discount-calc"],
  [/cursor/i, "eyJhdCI6IjIwMjYtMTItMDcifQ"],
  [/delta/i, "Мы "],
  [/url|href/i, "https://example.org/hook"],
];

function stringExample(s: Json, name: string): string {
  if (s.format === "uuid") return UUID;
  if (s.format === "date-time") return AT;
  if (s.format === "date") return AT.slice(0, 10);
  if (s.format === "uri" || s.format === "url") return "https://example.org/";
  if (s.format === "email") return "operator@example.org";
  let v = BY_NAME.find(([re]) => re.test(name))?.[1] ?? "пример";
  if (s.pattern && !new RegExp(s.pattern, "u").test(v)) v = fromPattern(s.pattern) ?? v;
  if (s.maxLength !== undefined && v.length > s.maxLength) v = v.slice(0, s.maxLength);
  if (s.minLength !== undefined && v.length < s.minLength) v = v.padEnd(s.minLength, "x");
  return v;
}

/**
 * A string matching a simple pattern (literals, \d and character classes with counts: `^\d\d$`,
 * `^task-\d{1,3}$`), or undefined when the pattern is beyond that.
 */
export function fromPattern(pattern: string): string | undefined {
  const v = pattern
    .replace(/^\^/, "")
    .replace(/\$$/, "")
    .replace(
      /(\\d|\[([^\]\\])[^\]]*\])(\{(\d+)(,\d*)?\}|\+|\*|\?)?/g,
      (_m, atom: string, first?: string, q?: string, n?: string) => {
        const ch = atom === "\\d" ? "1" : first!;
        if (!q) return ch;
        if (q === "+") return ch;
        if (q === "*" || q === "?") return "";
        return ch.repeat(Math.max(1, Number(n)));
      },
    )
    .replace(/\\(.)/g, "$1");
  try {
    return new RegExp(pattern, "u").test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function exampleOf(schema: Json, components: Json, name = "", depth = 0): unknown {
  if (depth > 8) return null;
  if (schema.$ref)
    return exampleOf(components[String(schema.$ref).split("/").pop()!] ?? {}, components, name, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum.find((v: unknown) => v !== null) ?? schema.enum[0];
  const union = (schema.oneOf ?? schema.anyOf) as Json[] | undefined;
  if (union?.length) {
    const member = union.find((m) => m.type !== "null") ?? union[0]!;
    return exampleOf(member, components, name, depth + 1);
  }
  if (Array.isArray(schema.allOf))
    return Object.assign({}, ...schema.allOf.map((m: Json) => exampleOf(m, components, name, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const out: Json = {};
      for (const [k, p] of Object.entries<Json>(schema.properties ?? {})) {
        // A property that may never be present (zod's never(): `not: {}`) has no example.
        if (p.not && typeof p.not === "object" && Object.keys(p.not).length === 0) continue;
        out[k] = exampleOf(p, components, k, depth + 1);
      }
      return out;
    }
    case "array": {
      const item = exampleOf(schema.items ?? {}, components, name, depth + 1);
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case "string":
      return stringExample(schema, name);
    case "integer":
    case "number":
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return schema.properties ? exampleOf({ ...schema, type: "object" }, components, name, depth) : {};
  }
}

/**
 * Every component schema gets `examples` (unless it has its own) and a description (unless it
 * has one): the operations and schemas that use it, so a reader of the reference knows where it
 * comes from.
 */
export function describeComponents(schemas: Json, paths: Record<string, Record<string, Json>>): void {
  const uses = new Map<string, string[]>();
  const note = (name: string, where: string) => uses.set(name, [...(uses.get(name) ?? []), where]);
  const refsIn = (v: unknown, found = new Set<string>()): Set<string> => {
    if (Array.isArray(v)) for (const x of v) refsIn(x, found);
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        if (k === "$ref" && typeof x === "string") found.add(x.split("/").pop()!);
        else refsIn(x, found);
      }
    return found;
  };
  for (const [path, methods] of Object.entries(paths))
    for (const [method, op] of Object.entries(methods))
      for (const [status, r] of Object.entries<Json>(op.responses ?? {}))
        for (const name of refsIn(r.content)) note(name, `ответ ${status} на ${method.toUpperCase()} ${path}`);
  for (const [owner, s] of Object.entries<Json>(schemas))
    for (const name of refsIn(s)) if (name !== owner) note(name, `часть схемы ${owner}`);
  for (const [name, s] of Object.entries<Json>(schemas)) {
    if (!s.description) {
      const where = [...new Set(uses.get(name) ?? [])];
      s.description = where.length
        ? `${name}: ${where.slice(0, 3).join("; ")}${where.length > 3 ? ` и ещё ${where.length - 3}` : ""}.`
        : `${name}.`;
    }
    if (!Array.isArray(s.examples) && s.example === undefined) s.examples = [exampleOf(s, schemas, name)];
  }
}
