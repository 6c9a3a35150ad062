/** Small numeric helpers shared by the benchmarks. */

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), mean };
}

export const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 1)} ms` : "n/a");
export const perSec = (x: number) => (Number.isFinite(x) ? `${Math.round(x).toLocaleString("en-US")}/s` : "n/a");
export const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "n/a");
export const bytes = (x: number) =>
  !Number.isFinite(x)
    ? "n/a"
    : x >= 1024 * 1024
      ? `${(x / 1024 / 1024).toFixed(1)} MB`
      : x >= 1024
        ? `${(x / 1024).toFixed(1)} KB`
        : `${Math.round(x)} B`;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `worker(i)` on `n` lanes until `deadline`; returns the latencies of every call. */
export async function lanes(
  n: number,
  durationMs: number,
  worker: (lane: number) => Promise<void>,
): Promise<{ latencies: number[]; elapsedMs: number; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: n }, async (_, lane) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await worker(lane);
          latencies.push(performance.now() - t0);
        } catch (e) {
          if (++errors <= 3) console.error(`  lane ${lane}: ${(e as Error).message}`);
          if (errors > 50) throw e;
        }
      }
    }),
  );
  return { latencies, elapsedMs: performance.now() - started, errors };
}
