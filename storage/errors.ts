/** A write that lost an optimistic-lock race: the row moved on since it was read. */
export class StaleVersionError extends Error {
  constructor(
    readonly what: string,
    readonly expected: number | null,
  ) {
    super(`${what} was changed by another writer (expected version ${expected ?? "none"})`);
  }
}
