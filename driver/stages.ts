import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Run } from "./run";

export type StageStatus = "ok" | "skipped" | "failed";

export interface StageRecord {
  stageId: string;
  name: string;
  status: StageStatus;
  durationMs: number;
  data: unknown;
}

// Keys whose values never leave the process in a stage (CONTRACT §4: no stage holds a credential).
const SECRET_KEY = /(api[-_]?key|authorization|password|secret|token(?!s?$)|bearer|credential)/i;
const SECRET_VALUE = /\b(sk-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._~+\/-]{8,})/g;

/** Deep copy with credentials replaced; applied to every stage before it is sent or written. */
export function redact(value: unknown, secrets: string[] = []): unknown {
  if (typeof value === "string") {
    let s = value.replace(SECRET_VALUE, "[redacted]");
    for (const secret of secrets) if (secret && secret.length >= 4) s = s.split(secret).join("[redacted]");
    return s;
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, secrets));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) && typeof v === "string" ? "[redacted]" : redact(v, secrets)]));
  }
  return value;
}

export interface StageRecorderOptions {
  run: Run;
  /** Send `stage` SSE events (the request's `debug: true` or AI_DEBUG). */
  stream: boolean;
  /** Write DEBUG_DIR/{runId}/NN-name.json (AI_DEBUG=true). */
  dir?: string;
  /** Configured secrets (API keys, tokens) scrubbed from every stage. */
  secrets?: string[];
}

/**
 * Numbered stages of one run (CONTRACT §2 `stage`, §4 debug files). Stages that did not
 * run are recorded as `skipped`, so the sequence stays diagnosable.
 */
export class StageRecorder {
  readonly records: StageRecord[] = [];
  private writes: Promise<unknown>[] = [];

  constructor(private readonly o: StageRecorderOptions) {}

  record(stageId: string, name: string, status: StageStatus, data: unknown, durationMs = 0): StageRecord {
    const rec: StageRecord = { stageId, name, status, durationMs: Math.round(durationMs * 100) / 100, data: redact(data ?? {}, this.o.secrets) };
    this.records.push(rec);
    if (this.o.stream) this.o.run.emit("stage", rec);
    if (this.o.dir) {
      const dir = join(this.o.dir, this.o.run.id);
      this.writes.push(mkdir(dir, { recursive: true }).then(() => writeFile(join(dir, `${stageId}-${name}.json`), JSON.stringify(rec, null, 2))).catch(() => {}));
    }
    return rec;
  }

  /** Times `fn` and records its result (or its failure, rethrown). */
  async time<T>(stageId: string, name: string, fn: () => Promise<T> | T, view: (r: T) => unknown = (r) => r): Promise<T> {
    const started = performance.now();
    try {
      const r = await fn();
      this.record(stageId, name, "ok", view(r), performance.now() - started);
      return r;
    } catch (e) {
      this.record(stageId, name, "failed", { error: (e as Error).message }, performance.now() - started);
      throw e;
    }
  }

  skip(stageId: string, name: string, reason: string): StageRecord {
    return this.record(stageId, name, "skipped", { reason });
  }

  /** Waits for debug files (tests read them right after the run). */
  async flushed(): Promise<void> {
    await Promise.all(this.writes);
  }
}
