import { registry } from "../http/observability/metrics";

/**
 * Where the engine's turns waited during a window, from the server's own turn-phase histogram
 * (ds_turn_phase_seconds: admit, first_token, commit; http/sse.ts). An in-process bench server's
 * registry is read directly, a separate server's /metrics text otherwise; the window's share is the
 * difference of two readings. Percentiles are bucket bounds ("≤ 250 ms"): what a Prometheus query
 * would show.
 */
export type PhaseReading = Map<string, Map<number, number>>;

export const PHASES = ["admit", "first_token", "commit"] as const;

/** The histogram's buckets of `system` in a Prometheus text exposition (a server's /metrics). */
export function phasesFromMetrics(text: string, system = "clinic"): PhaseReading {
  const out: PhaseReading = new Map();
  for (const m of text.matchAll(/^ds_turn_phase_seconds_bucket\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.system !== system) continue;
    const le = labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(labels.le);
    if (!out.has(labels.phase!)) out.set(labels.phase!, new Map());
    out.get(labels.phase!)!.set(le, Number(m[2]));
  }
  return out;
}

/** The sum of every sample of `name` (all label sets) in a Prometheus text exposition; 0 if absent. */
export function metricTotal(text: string, name: string): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "gm"))) sum += Number(m[1]);
  return sum;
}

/** The same, read from this process's registry (the in-process bench server's). */
export async function readPhases(system = "clinic"): Promise<PhaseReading> {
  return phasesFromMetrics(await registry.getSingleMetricAsString("ds_turn_phase_seconds"), system);
}

/** The upper bucket bound (seconds) under which `q` of the window's observations of `phase` fell. */
export function phaseQuantile(before: PhaseReading, after: PhaseReading, phase: string, q: number): number {
  const a = after.get(phase);
  if (!a) return Number.NaN;
  const b = before.get(phase);
  const cum = [...a].map(([le, n]) => [le, n - (b?.get(le) ?? 0)] as const).sort((x, y) => x[0] - y[0]);
  const total = cum.at(-1)?.[1] ?? 0;
  if (total <= 0) return Number.NaN;
  return cum.find(([, n]) => n >= q * total)?.[0] ?? Number.NaN;
}

export function formatBound(s: number): string {
  if (!Number.isFinite(s)) return Number.isNaN(s) ? "—" : "> 30 s";
  return s < 1 ? `≤${Math.round(s * 1000)}ms` : `≤${s}s`;
}

/** Every phase's p50/p99 in the window between two readings, e.g. "admit ≤25ms/≤100ms, first_token …". */
export function phaseSummary(before: PhaseReading, after: PhaseReading): string {
  return PHASES.map(
    (p) =>
      `${p} ${formatBound(phaseQuantile(before, after, p, 0.5))}/${formatBound(phaseQuantile(before, after, p, 0.99))}`,
  ).join(", ");
}
