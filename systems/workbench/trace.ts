// The numbered debug stages of seed 001 (CONTRACT §4). Stages report through a sink so the pure
// pipeline never knows whether they become SSE `stage` events, files, or nothing.

export const STAGES = [
  ["00", "metadata"],
  ["01", "original-request"],
  ["02", "normalization"],
  ["03", "plan"],
  ["04", "routing"],
  ["05", "documentation"],
  ["06", "domain-resolution"],
  ["07", "interaction-clarification"],
  ["08", "conversation-context"],
  ["09", "adequacy-context-plan"],
  ["10", "prompt-manifest"],
  ["11", "model-request"],
  ["12", "response-validation"],
] as const;

export type StageId = (typeof STAGES)[number][0];
export type StageStatus = "ok" | "skipped" | "failed";

export interface StageRecord {
  stageId: StageId;
  name: string;
  status: StageStatus;
  durationMs: number;
  data: unknown;
}

export type StageSink = (s: StageRecord) => void;

const NAMES = new Map<string, string>(STAGES);

// Keys that must never reach a stage, whatever a caller passes in (CONTRACT §4).
const SECRET_KEY = /(?:api[-_]?key|authorization|password|secret|token(?!s?Budget|s$)|credential|bearer)/i;

/** Deep copy without credential-like keys; bearer-looking strings are masked. */
export function scrub(value: unknown, depth = 0): unknown {
  if (depth > 12) return "[depth]";
  if (typeof value === "string") return value.replace(/\b(?:sk-[A-Za-z0-9_-]{8,}|Bearer\s+\S+)/g, "[redacted]");
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? "[redacted]" : scrub(v, depth + 1);
    return out;
  }
  return value;
}

/**
 * Collects stages in id order: each stage is reported once; `finish()` reports every stage not
 * yet reported as skipped, so the sequence 00–12 is always complete and diagnosable.
 */
export class StageTrace {
  private readonly done = new Set<string>();
  readonly records: StageRecord[] = [];

  constructor(private readonly sink: StageSink = () => {}) {}

  record(stageId: StageId, status: StageStatus, data: unknown, durationMs = 0): void {
    if (this.done.has(stageId)) return;
    // Report skipped predecessors first, so ids reach the client in order.
    for (const [id] of STAGES) {
      if (id >= stageId) break;
      if (!this.done.has(id)) this.emit({ stageId: id, name: NAMES.get(id)!, status: "skipped", durationMs: 0, data: { reason: "not_run" } });
    }
    this.emit({ stageId, name: NAMES.get(stageId)!, status, durationMs: Math.round(durationMs * 100) / 100, data: scrub(data) });
  }

  skip(stageId: StageId, reason: string): void {
    this.record(stageId, "skipped", { reason });
  }

  /** Times `fn` and records its result as the stage's data. */
  time<T>(stageId: StageId, fn: () => T, data: (r: T) => unknown = (r) => r): T {
    const t0 = performance.now();
    const r = fn();
    this.record(stageId, "ok", data(r), performance.now() - t0);
    return r;
  }

  has(stageId: StageId): boolean {
    return this.done.has(stageId);
  }

  finish(reason = "not_needed"): void {
    for (const [id] of STAGES) if (!this.done.has(id)) this.skip(id, reason);
  }

  private emit(r: StageRecord): void {
    this.done.add(r.stageId);
    this.records.push(r);
    this.sink(r);
  }
}
