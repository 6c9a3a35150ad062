/** A write that lost an optimistic-lock race: the row moved on since it was read. */
export class StaleVersionError extends Error {
  constructor(
    readonly what: string,
    readonly expected: number | null,
  ) {
    super(`${what} was changed by another writer (expected version ${expected ?? "none"})`);
  }
}

/**
 * PostgreSQL's class 22, "data exception": a value the database cannot take as given — a NUL
 * byte in text, "x" where an integer goes, a number out of range. Always the request's value,
 * so the HTTP edge answers it as invalid input, not as a server failure.
 */
export function isDataException(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && e.name === "PostgresError" && typeof code === "string" && code.startsWith("22");
}
