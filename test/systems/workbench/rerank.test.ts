import { describe, expect, it } from "vitest";
import { applyRerank, rerankGate, validateRerankerOutput } from "../../../systems/workbench/rerank";
import type { TaskResolution } from "../../../systems/workbench/types";

const ambiguous: TaskResolution = {
  taskId: "task-1",
  mention: "Расчёт скидки",
  status: "ambiguous",
  candidates: [
    {
      candidateId: "c1",
      identity: "composition-discount",
      displayName: "Расчёт скидки",
      documentType: "Composition",
      score: 0.95,
      signals: ["display_name_exact"],
    },
    {
      candidateId: "c2",
      identity: "composition-discount-v1",
      displayName: "Расчёт скидки",
      documentType: "Composition",
      score: 0.95,
      signals: ["display_name_exact"],
    },
  ],
};

describe("reranker gate", () => {
  it("opens only for several close candidates", () => {
    expect(rerankGate(ambiguous).call).toBe(true);
    expect(rerankGate({ ...ambiguous, status: "resolved" }).call).toBe(false);
    expect(rerankGate({ ...ambiguous, candidates: ambiguous.candidates.slice(0, 1) }).call).toBe(false);
    expect(
      rerankGate({
        ...ambiguous,
        candidates: [...ambiguous.candidates, { ...ambiguous.candidates[0]!, candidateId: "c3", score: 0.5 }],
      }).call,
    ).toBe(false);
  });
});

describe("reranker output validation: closed list only", () => {
  it("accepts a candidateId from the list", () => {
    const d = validateRerankerOutput('{"choice": "c2"}', ambiguous);
    expect(d).toEqual({ kind: "choose", candidateId: "c2", identity: "composition-discount-v1" });
    expect(applyRerank(ambiguous, d)).toMatchObject({
      status: "resolved",
      resolvedIdentity: "composition-discount-v1",
      resolvedBy: "reranker",
    });
  });
  it("none and clarify are answers, not choices", () => {
    expect(validateRerankerOutput({ choice: "none" }, ambiguous).kind).toBe("none");
    expect(validateRerankerOutput({ choice: "clarify" }, ambiguous).kind).toBe("clarify");
  });
  it("an id outside the list, an identity, extra keys or bad JSON are ignored", () => {
    expect(validateRerankerOutput({ choice: "c9" }, ambiguous)).toEqual({
      kind: "invalid",
      reason: "outside_closed_list",
    });
    expect(validateRerankerOutput({ choice: "composition-discount" }, ambiguous).kind).toBe("invalid");
    expect(validateRerankerOutput({ choice: "c1", identity: "composition-discount" }, ambiguous).kind).toBe("invalid");
    expect(validateRerankerOutput("not json", ambiguous).kind).toBe("invalid");
    expect(applyRerank(ambiguous, { kind: "invalid", reason: "x" })).toBe(ambiguous);
  });
});
