// The engineering trace of a run (seed 002 §14): Evidence numbers its own stages; the driver's
// recorder (driver/stages.ts) sends them as SSE `stage` events when the request asks for debug and
// writes DEBUG_DIR/{runId}/NN-name.json with AI_DEBUG, the ones that never ran as skipped.
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
