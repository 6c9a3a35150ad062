/**
 * Response headers against the OpenAPI document (issue 45): every header a response carries is
 * declared for its operation and status, and every header declared `required` is there. Headers
 * of HTTP itself (framing, caching, the body's type) are not the API's and not declared.
 */
type Json = Record<string, any>;

const HTTP_OWN = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "date",
  "connection",
  "keep-alive",
  "cache-control",
  "vary",
  "etag",
  "last-modified",
]);

export function headerProblems(
  doc: Json,
  x: { method: string; path: string; status: number; headers: Headers },
): string[] {
  const path = x.path.split("?")[0]!;
  const entry = Object.entries<Json>(doc.paths).find(([p, methods]) => {
    const re = new RegExp(`^${p.replace(/\{\w+\}/g, "[^/]+")}$`);
    return re.test(path) && methods[x.method.toLowerCase()];
  });
  if (!entry) return [`${x.method} ${path}: no operation`];
  const op = entry[1][x.method.toLowerCase()];
  const response = op.responses[String(x.status)];
  const where = `${op.operationId} ${x.status}`;
  if (!response) return [`${where}: status not declared`];
  const declared = new Map(
    Object.entries<Json>(response.headers ?? {}).map(([name, h]) => [name.toLowerCase(), h] as const),
  );
  const problems: string[] = [];
  x.headers.forEach((_v, name) => {
    if (!HTTP_OWN.has(name) && !declared.has(name)) problems.push(`${where}: sends ${name}, not declared`);
  });
  for (const [name, h] of declared)
    if (h.required && !x.headers.has(name)) problems.push(`${where}: declares ${name} required, not sent`);
  return problems;
}
