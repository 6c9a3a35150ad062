import { describe, expect, it } from "vitest";
import { scrub, StageTrace, type StageRecord } from "../../../systems/workbench/trace";
import { stageIds } from "./fixtures";

describe("stage trace", () => {
  it("reports 00–12 in order, filling stages that did not run as skipped", () => {
    const seen: StageRecord[] = [];
    const t = new StageTrace((s) => seen.push(s));
    t.record("00", "ok", {});
    t.record("03", "ok", { tasks: [] });
    t.record("03", "ok", { again: true });
    t.finish("clarification_required");
    expect(seen.map((s) => s.stageId)).toEqual(stageIds(12));
    expect(seen[1]).toMatchObject({ name: "original-request", status: "skipped" });
    expect(seen[3]!.data).toEqual({ tasks: [] });
    expect(seen.at(-1)).toMatchObject({
      name: "response-validation",
      status: "skipped",
      data: { reason: "clarification_required" },
    });
  });
  it("never carries a credential", () => {
    expect(
      scrub({
        apiKey: "sk-abcdefghijkl",
        nested: { Authorization: "Bearer x" },
        note: "key sk-abcdefghijklmnop here",
        tokens: 5,
      }),
    ).toEqual({
      apiKey: "[redacted]",
      nested: { Authorization: "[redacted]" },
      note: "key [redacted] here",
      tokens: 5,
    });
  });
});
