import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Run } from "../../driver/run";
import type { WorkbenchEvents } from "./contract";
import { StageTrace, type StageRecord } from "./trace";
import type { Deps } from "../../http/deps";

/**
 * Where a run's stages go: SSE `stage` events when the request asked for debug (or AI_DEBUG is
 * on), and `DEBUG_DIR/{runId}/NN-name.json` files with AI_DEBUG=true. Stage data is scrubbed of
 * credential-like keys by StageTrace before it gets here.
 */
export function stageTrace(deps: Deps, run: Run<WorkbenchEvents>): StageTrace {
  const dir = deps.config.aiDebug ? join(deps.config.debugDir, run.id) : null;
  let made = false;
  return new StageTrace((s: StageRecord) => {
    if (run.debug && !run.ended) run.emit("stage", s);
    if (dir) {
      try {
        if (!made) { mkdirSync(dir, { recursive: true }); made = true; }
        writeFileSync(join(dir, `${s.stageId}-${s.name}.json`), `${JSON.stringify(s, null, 2)}\n`);
      } catch (e) {
        deps.log(`debug stage ${s.stageId} not written: ${(e as Error).message}`);
      }
    }
  });
}
