import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Run } from "./run";

/**
 * The one stage recorder of every dialogue system (CONTRACT §2 `stage`, §4 debug files):
 * numbered stages, each scrubbed of credentials before it goes anywhere, sent as SSE `stage`
 * events to a debugging client and written as DEBUG_DIR/{runId}/NN-name.json with AI_DEBUG.
 */

export type StageStatus = "ok" | "skipped" | "failed";

export interface StageRecord {
  stageId: string;
  name: string;
  status: StageStatus;
  durationMs: number;
  data: unknown;
}

/** CONTRACT §4's numbered stages (Workbench and clinic); a system may number its own (Evidence). */
export const CONTRACT_STAGES = [
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

// Keys whose values never leave the process in a stage (CONTRACT §4: no stage holds a credential);
// `tokens`, `maxTokens`, `tokensBudget` are counts, not credentials.
const SECRET_KEY = /(?:api[-_]?key|authorization|password|secret|token(?!s?Budget|s$)|credential|bearer)/i;
const SECRET_VALUE = /\b(?:sk-[A-Za-z0-9_-]{8,}|Bearer\s+\S+)/g;

/** Deep copy with credentials replaced (by key, by shape, and every configured secret of 8+ characters: a shorter one would blank ordinary words); applied to every stage. */
export function redact(value: unknown, secrets: readonly string[] = [], depth = 0): unknown {
  if (depth > 12) return "[depth]";
  if (typeof value === "string") {
    let s = value.replace(SECRET_VALUE, "[redacted]");
    for (const secret of secrets) if (secret.length >= 8) s = s.split(secret).join("[redacted]");
    return s;
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, secrets, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = SECRET_KEY.test(k) ? "[redacted]" : redact(v, secrets, depth + 1);
    return out;
  }
  return value;
}

/** Where a recorded stage goes; `stream: false` for a stage only written as a file (one that never ran). */
export type StageSink = (rec: StageRecord, how: { stream: boolean }) => void;

export interface StageRecorderOptions {
  /** The system's numbered stages: names by id, and the list a finished run reports in full. */
  stages: readonly (readonly [string, string])[];
  sink?: StageSink;
  /**
   * Each stage is reported once, and the stages before it not yet reported go first as skipped,
   * so ids reach the client in order and `finish()` sends the rest as skipped (Workbench). Without
   * it a stage may repeat (the clinic's second branch call) and the stages that never ran are only
   * written as skipped files.
   */
  inOrder?: boolean;
  /** Configured secrets (API keys, tokens) scrubbed from every stage. */
  secrets?: readonly string[];
  /**
   * Nothing reads the stages (no debugging client, no debug files, no `records` read after the
   * run): a stage is only marked done, its data never built — no thunk called, no deep copy.
   */
  quiet?: boolean;
}

/**
 * A stage's data, or a function that builds it: called only when someone reads the stage, so
 * a run nobody debugs pays nothing for it (hashes of prompts, copies of state).
 */
export type StageData = unknown;
const built = (data: StageData): unknown => (typeof data === "function" ? (data as () => unknown)() : data);

export class StageRecorder<Id extends string = string> {
  readonly records: StageRecord[] = [];
  private readonly done = new Set<string>();
  private readonly names: Map<string, string>;

  constructor(private readonly o: StageRecorderOptions) {
    this.names = new Map(o.stages.map(([id, name]) => [id, name]));
  }

  /** Records a stage (its name from the list unless given); in order mode a repeated id is ignored. */
  record(stageId: Id, status: StageStatus, data: StageData, durationMs = 0, name?: string): void {
    if (this.o.quiet) {
      if (this.o.inOrder) for (const [id] of this.o.stages) if (id < stageId) this.done.add(id);
      this.done.add(stageId);
      return;
    }
    if (this.o.inOrder) {
      if (this.done.has(stageId)) return;
      for (const [id, n] of this.o.stages) {
        if (id >= stageId) break;
        if (!this.done.has(id))
          this.emit({ stageId: id, name: n, status: "skipped", durationMs: 0, data: { reason: "not_run" } });
      }
    }
    this.emit({
      stageId,
      name: name ?? this.names.get(stageId) ?? stageId,
      status,
      durationMs: Math.round(durationMs * 100) / 100,
      data: redact(built(data), this.o.secrets),
    });
  }

  skip(stageId: Id, reason: string): void {
    this.record(stageId, "skipped", { reason });
  }

  /** Times `fn` and records its result as the stage's data. */
  time<T>(stageId: Id, fn: () => T, data: (r: T) => unknown = (r) => r): T {
    const t0 = performance.now();
    const r = fn();
    this.record(stageId, "ok", () => data(r), performance.now() - t0);
    return r;
  }

  has(stageId: Id): boolean {
    return this.done.has(stageId);
  }

  /** The end of the run: every listed stage that did not run is reported (in order mode) or written as skipped. */
  finish(reason = "not_needed"): void {
    for (const [id, name] of this.o.stages) {
      if (this.done.has(id)) continue;
      if (this.o.quiet) {
        this.done.add(id);
        continue;
      }
      if (this.o.inOrder) this.skip(id as Id, reason);
      else this.o.sink?.({ stageId: id, name, status: "skipped", durationMs: 0, data: null }, { stream: false });
    }
  }

  private emit(r: StageRecord): void {
    this.done.add(r.stageId);
    this.records.push(r);
    this.o.sink?.(r, { stream: true });
  }
}

/**
 * A run's stage output: SSE `stage` events when the run is debugged (the request's `debug` or
 * AI_DEBUG), and with `dir` (AI_DEBUG) DEBUG_DIR/{runId}/NN-name.json — a repeated stage gets
 * -2, -3…. Files are best effort: an unwritable directory must not fail the turn.
 */
export function stageSink(
  run: Pick<Run, "id" | "debug" | "ended" | "emit">,
  dir: string | null,
  log: (line: string) => void = () => {},
): StageSink {
  const runDir = dir ? join(dir, run.id) : null;
  const written = new Map<string, number>();
  let made = false;
  return (rec, how) => {
    if (how.stream && run.debug && !run.ended) run.emit("stage", rec);
    if (!runDir) return;
    const n = (written.get(rec.stageId) ?? 0) + 1;
    written.set(rec.stageId, n);
    try {
      if (!made) (mkdirSync(runDir, { recursive: true }), (made = true));
      writeFileSync(
        join(runDir, `${rec.stageId}-${rec.name}${n > 1 ? `-${n}` : ""}.json`),
        `${JSON.stringify(rec, null, 2)}\n`,
      );
    } catch (e) {
      log(`debug stage ${rec.stageId} not written: ${(e as Error).message}`);
    }
  };
}

/**
 * The recorder of one run, wired to its output. Quiet (no stage data built) when the run is not
 * debugged, there is no debug directory and the caller does not `keep` the records to read them.
 */
export function runStages<Id extends string = string>(
  run: Pick<Run, "id" | "debug" | "ended" | "emit">,
  o: Omit<StageRecorderOptions, "sink" | "quiet"> & {
    dir: string | null;
    log?: (line: string) => void;
    keep?: boolean;
  },
): StageRecorder<Id> {
  const quiet = !run.debug && !o.dir && !o.keep;
  return new StageRecorder<Id>({ ...o, quiet, sink: stageSink(run, o.dir, o.log) });
}
