import type { GuardSpec, Slots, StepSpec } from "./types";

/** A slot counts as filled when it holds something other than null, undefined or blank text. */
export function isFilled(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === "string") return value.trim().length > 0;
  return true;
}

export function guardActive(guard: GuardSpec, slots: Slots): boolean {
  if (guard.trigger_slot === undefined) return true;
  const actual = slots[guard.trigger_slot];
  // Without trigger_value, any filled trigger slot activates the guard.
  if (guard.trigger_value === undefined) return isFilled(actual);
  return JSON.stringify(actual) === JSON.stringify(guard.trigger_value);
}

export interface BlockedGuard {
  name: string;
  description: string;
  missing: string[];
}

/** The guards of `step` that forbid leaving it with these slots. */
export function blockedGuards(step: StepSpec, slots: Slots): BlockedGuard[] {
  const out: BlockedGuard[] = [];
  for (const [name, guard] of Object.entries(step.guards)) {
    if (!guardActive(guard, slots)) continue;
    const missing = guard.required_slots.filter((s) => !isFilled(slots[s]));
    if (missing.length) out.push({ name, description: guard.description, missing });
  }
  return out;
}

/** Slot updates merge over the old slots; a null value clears a slot. */
export function mergeSlots(slots: Slots, updates: Slots): Slots {
  const next: Slots = { ...slots };
  for (const [k, v] of Object.entries(updates)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  return next;
}
