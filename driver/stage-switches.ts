/**
 * On/off switches of the preparatory model stages (seed 001, "Поэтапное развитие": a stage is
 * switched on only after it was compared on labelled requests — see eval/ and notes/README_EVAL.md).
 * Read at the point where each stage is gated, on every call, so one process can run both
 * configurations of a comparison. `off`, `false`, `0` or `no` switch a stage off; anything else,
 * or nothing, leaves it at its default.
 */
export const STAGE_SWITCHES = {
  /** Workbench LLM Planner for complex and linked requests (seed 001 §3). */
  planner: "WORKBENCH_PLANNER",
  /** Workbench Semantic Reranker over a closed list of close candidates (seed 001 §6). */
  reranker: "WORKBENCH_RERANKER",
  /** Workbench clarification-reply classifier for ambiguous free text (seed 000). */
  classifier: "WORKBENCH_CLASSIFIER",
  /** Clinic: the [ПОДСКАЗКА РОУТЕРА] block a stepped branch gets when the router disagrees (seed 003). */
  routerHint: "CLINIC_ROUTER_HINT",
} as const;

export type StageName = keyof typeof STAGE_SWITCHES;

/** Defaults, chosen by the comparison recorded in notes/README_EVAL.md. */
export const STAGE_DEFAULTS: Record<StageName, boolean> = {
  planner: true,
  reranker: true,
  classifier: true,
  routerHint: true,
};

export function stageEnabled(stage: StageName, env: Record<string, string | undefined> = process.env): boolean {
  const v = env[STAGE_SWITCHES[stage]]?.trim().toLowerCase();
  if (v === undefined || v === "") return STAGE_DEFAULTS[stage];
  return !["off", "false", "0", "no"].includes(v);
}
