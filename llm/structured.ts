import { z } from "zod";

/** The json_schema response_format of CONTRACT §1 for a zod schema. */
export function responseFormat(schema: z.ZodType, name: string) {
  const json = z.toJSONSchema(schema, { target: "draft-7", unrepresentable: "any" }) as Record<string, unknown>;
  delete json.$schema;
  return {
    type: "json_schema" as const,
    json_schema: { name: name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64), schema: json, strict: false },
  };
}

/**
 * Reads a structured answer from message content. Models wrap JSON in fences or prose
 * now and then; take the first balanced object. Anything that fails the schema is `null`.
 */
export function parseStructured<S extends z.ZodType>(content: string, schema: S): z.infer<S> | null {
  const candidates = [content.trim()];
  const fenced = content.match(/```(?:json)?\s*([\s\S]*?)```/);
  if (fenced?.[1]) candidates.push(fenced[1].trim());
  const start = content.indexOf("{");
  const end = content.lastIndexOf("}");
  if (start >= 0 && end > start) candidates.push(content.slice(start, end + 1));
  for (const c of candidates) {
    try {
      const parsed = schema.safeParse(JSON.parse(c));
      if (parsed.success) return parsed.data;
    } catch {
      /* try the next reading */
    }
  }
  return null;
}
