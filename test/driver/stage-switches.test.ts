import { describe, expect, it } from "vitest";
import { STAGE_DEFAULTS, stageEnabled } from "../../driver/stage-switches";

describe("stage switches", () => {
  it("keep the recorded defaults when unset or empty", () => {
    for (const stage of ["planner", "reranker", "classifier", "routerHint"] as const) {
      expect(stageEnabled(stage, {})).toBe(STAGE_DEFAULTS[stage]);
      expect(
        stageEnabled(stage, {
          WORKBENCH_PLANNER: "",
          WORKBENCH_RERANKER: "",
          WORKBENCH_CLASSIFIER: "",
          CLINIC_ROUTER_HINT: "",
        }),
      ).toBe(STAGE_DEFAULTS[stage]);
    }
  });

  it("switch a stage off with off/false/0/no (any case) and on with anything else", () => {
    for (const v of ["off", "OFF", "false", "0", "no", " off "])
      expect(stageEnabled("reranker", { WORKBENCH_RERANKER: v })).toBe(false);
    for (const v of ["on", "true", "1", "yes"]) expect(stageEnabled("reranker", { WORKBENCH_RERANKER: v })).toBe(true);
    // Each stage reads only its own variable.
    expect(stageEnabled("planner", { WORKBENCH_RERANKER: "off" })).toBe(true);
    expect(stageEnabled("routerHint", { CLINIC_ROUTER_HINT: "off" })).toBe(false);
  });
});
