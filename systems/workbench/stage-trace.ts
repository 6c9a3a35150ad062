import type { Run } from "../../driver/run";
import { stageSink } from "../../driver/stages";
import { configuredSecrets } from "../../http/secrets";
import type { WorkbenchEvents } from "./contract";
import type { Deps } from "../../http/deps";
import { StageTrace } from "./trace";

/**
 * A Workbench run's stages: SSE `stage` events when the request asked for debug (or AI_DEBUG is
 * on), and `DEBUG_DIR/{runId}/NN-name.json` files with AI_DEBUG=true (driver/stages.ts).
 */
export function stageTrace(deps: Deps, run: Run<WorkbenchEvents>): StageTrace {
  return new StageTrace(
    stageSink(run, deps.config.aiDebug ? deps.config.debugDir : null, deps.log),
    configuredSecrets(deps.config),
  );
}
