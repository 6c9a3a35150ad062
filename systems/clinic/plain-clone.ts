/**
 * A deep copy of plain data — objects, arrays and primitives, as the clinic's thread state and
 * turn scratch hold (JSON from the store and the model, strings the machine built). The machine's
 * assigns copy the state before changing it (turn-logic.ts `change`), several times a turn;
 * `structuredClone` costs about eight times as much for this shape (it serializes through the
 * platform's clone machinery), and nothing here needs what it adds (Dates, Maps, cycles).
 * A `__proto__` key stays an own key, as JSON.parse leaves it, not the copy's prototype.
 */
export function plainClone<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(plainClone) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = plainClone((value as Record<string, unknown>)[k]);
    if (k === "__proto__")
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out as T;
}
