import type { AnyMachineSnapshot } from "xstate";

/**
 * Every field of a snapshot, as data, for comparing the engine's shortcuts (driver/assign.ts,
 * driver/resolve-memo.ts) with stock xstate. `valueOrder` compares the state value as JSON text,
 * so a restore that yields the same value with its keys in another order is told apart.
 */
export const snapshotFields = (s: AnyMachineSnapshot, opts: { valueOrder?: boolean } = {}) => ({
  status: s.status,
  value: opts.valueOrder ? JSON.stringify(s.value) : s.value,
  context: s.context,
  tags: [...s.tags].sort(),
  nodes: s._nodes.map((n) => n.id),
  history: Object.fromEntries(Object.entries(s.historyValue).map(([k, v]) => [k, v.map((n) => n.id)])),
  children: s.children,
  output: s.output,
  error: s.error,
  keys: Object.keys(s).sort(),
});
