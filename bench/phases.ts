import { metrics } from "../http/observability/metrics";

/**
 * Where the engine's turns waited during a window, from the server's own turn-phase histogram
 * (ds_turn_phase_seconds: admit, first_token, commit; http/sse.ts). The bench's server runs in
 * this process, so the registry is read directly; the window's share is the difference of two
 * readings. Percentiles are bucket bounds ("≤ 250 ms"): what a Prometheus query would show.
 */
export type PhaseReading = Map<string, Map<number, number>>;

export const PHASES = ["admit", "first_token", "commit"] as const;

export async function readPhases(system = "clinic"): Promise<PhaseReading> {
  const out: PhaseReading = new Map();
  const got = await metrics.turnPhaseSeconds.get();
  for (const v of got.values) {
    if (v.metricName !== "ds_turn_phase_seconds_bucket" || v.labels.system !== system) continue;
    const phase = String(v.labels.phase);
    // prom-client types the labels as the histogram's own; a bucket also carries `le`.
    const raw = (v.labels as Record<string, string | number>).le;
    const le = raw === "+Inf" ? Number.POSITIVE_INFINITY : Number(raw);
    if (!out.has(phase)) out.set(phase, new Map());
    out.get(phase)!.set(le, v.value);
  }
  return out;
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
