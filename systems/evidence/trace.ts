// The engineering trace of a run (seed 002 §14): numbered stages sent as SSE `stage` events
// when the request asks for debug, and written as DEBUG_DIR/{runId}/NN-name.json with AI_DEBUG.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface StageRecord {
  stageId: string;
  name: string;
  status: "ok" | "skipped" | "failed";
  durationMs: number;
  data: unknown;
}

export const EVIDENCE_STAGES = [
  ["00", "metadata"],
  ["01", "original-request"],
  ["02", "interpretation"],
  ["03", "conversation-context"],
  ["04", "plan"],
  ["05", "tool-runs"],
  ["06", "evidence"],
  ["07", "coverage"],
  ["08", "prompt-manifest"],
  ["09", "answer"],
  ["10", "debug-view"],
] as const;

export class Trace {
  readonly stages: StageRecord[] = [];
  constructor(
    private readonly o: { runId: string; emit: ((data: StageRecord) => void) | null; dir: string | null },
  ) {}

  stage(stageId: string, name: string, status: StageRecord["status"], durationMs: number, data: unknown): void {
    const rec: StageRecord = { stageId, name, status, durationMs: Math.round(durationMs * 10) / 10, data };
    this.stages.push(rec);
    this.o.emit?.(rec);
  }

  /** Stages that never ran are written as skipped, so a reader sees the whole numbered list. */
  async writeFiles(): Promise<string | null> {
    if (!this.o.dir) return null;
    const dir = join(this.o.dir, this.o.runId);
    await mkdir(dir, { recursive: true });
    for (const [id, name] of EVIDENCE_STAGES) {
      const rec = this.stages.find((s) => s.stageId === id) ?? { stageId: id, name, status: "skipped", durationMs: 0, data: null };
      await writeFile(join(dir, `${id}-${name}.json`), JSON.stringify(rec, null, 2));
    }
    return dir;
  }
}
