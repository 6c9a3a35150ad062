import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { redact, runStages, StageRecorder, type StageRecord } from "../../driver/stages";

describe("redact", () => {
  it("removes credentials by key, by shape and by configured value", () => {
    const out = redact(
      {
        apiKey: "sk-abcdefghijklmnop",
        headers: { Authorization: "Bearer abc.def.ghi.jkl" },
        note: "ключ sk-zzzzzzzzzzzzzzzz в тексте",
        tokens: 3,
        nested: [{ password: "hunter2" }],
        mine: "eval-token-value",
      },
      ["eval-token-value"],
    );
    expect(out).toEqual({
      apiKey: "[redacted]",
      headers: { Authorization: "[redacted]" },
      note: "ключ [redacted] в тексте",
      tokens: 3,
      nested: [{ password: "[redacted]" }],
      mine: "[redacted]",
    });
  });
  it("leaves a configured secret too short to be told from a word", () => {
    expect(redact({ note: "test of tok-a" }, ["tok-a"])).toEqual({ note: "test of tok-a" });
  });
});

/** A run as the recorder sees it: what it streams is collected. */
const fakeRun = (debug: boolean) => {
  const streamed: { event: string; data: StageRecord }[] = [];
  return {
    run: {
      id: randomUUID(),
      debug,
      ended: false,
      emit: (event: string, data: unknown) => void streamed.push({ event, data: data as StageRecord }),
    },
    streamed,
  };
};
const LIST = [
  ["00", "metadata"],
  ["01", "original-request"],
  ["02", "plan"],
] as const;

describe("the one stage recorder", () => {
  it("streams each stage scrubbed to a debugged run, writes files with -2 for a repeat and the stages that never ran as skipped", () => {
    const dir = mkdtempSync(join(tmpdir(), "stages-"));
    const { run, streamed } = fakeRun(true);
    const stages = runStages(run, { stages: LIST, dir, secrets: ["configured-secret-1"] });
    stages.record("00", "ok", { key: "configured-secret-1", apiKey: "x" }, 1.2345);
    stages.record("02", "ok", { call: 1 });
    stages.record("02", "failed", { call: 2 });
    stages.finish();
    // Not streamed: the stage that never ran is only a file.
    expect(streamed.map((s) => [s.event, s.data.stageId, s.data.status])).toEqual([
      ["stage", "00", "ok"],
      ["stage", "02", "ok"],
      ["stage", "02", "failed"],
    ]);
    expect(streamed[0]!.data).toEqual({
      stageId: "00",
      name: "metadata",
      status: "ok",
      durationMs: 1.23,
      data: { key: "[redacted]", apiKey: "[redacted]" },
    });
    const files = readdirSync(join(dir, run.id)).sort();
    expect(files).toEqual(["00-metadata.json", "01-original-request.json", "02-plan-2.json", "02-plan.json"]);
    expect(JSON.parse(readFileSync(join(dir, run.id, "01-original-request.json"), "utf8"))).toMatchObject({
      status: "skipped",
      data: null,
    });
    expect(JSON.parse(readFileSync(join(dir, run.id, "02-plan-2.json"), "utf8"))).toMatchObject({
      status: "failed",
      data: { call: 2 },
    });
  });

  it("streams nothing to a run that is not debugged, writes nothing without a directory, and builds no data", () => {
    const { run, streamed } = fakeRun(false);
    const stages = runStages(run, { stages: LIST, dir: null });
    let built = 0;
    stages.record("00", "ok", () => ({ built: ++built }));
    stages.record("01", "ok", { plain: true });
    expect(stages.has("00")).toBe(true);
    stages.finish();
    expect(streamed).toEqual([]);
    expect(built).toBe(0);
    expect(stages.records).toEqual([]);
    // A caller that reads the records after the run keeps them, data built.
    const kept = runStages(run, { stages: LIST, dir: null, keep: true });
    kept.record("00", "ok", () => ({ built: ++built }));
    expect(built).toBe(1);
    expect(kept.records.map((r) => [r.stageId, r.data])).toEqual([["00", { built: 1 }]]);
  });

  it("builds a stage's data from its function, once, for a debugged run", () => {
    const { run, streamed } = fakeRun(true);
    const stages = runStages(run, { stages: LIST, dir: null });
    let built = 0;
    stages.record("00", "ok", () => ({ built: ++built, token: "x" }));
    expect(built).toBe(1);
    expect(streamed.map((s) => s.data.data)).toEqual([{ built: 1, token: "[redacted]" }]);
  });

  it("in order mode reports a stage once, its unreported predecessors first, and finishes the list as skipped", () => {
    const seen: StageRecord[] = [];
    const t = new StageRecorder({ stages: LIST, inOrder: true, sink: (r) => void seen.push(r) });
    t.record("02", "ok", { first: true });
    t.record("02", "ok", { again: true });
    t.finish("cancelled");
    expect(seen.map((s) => [s.stageId, s.status])).toEqual([
      ["00", "skipped"],
      ["01", "skipped"],
      ["02", "ok"],
    ]);
    expect(seen[2]!.data).toEqual({ first: true });
    const t2 = new StageRecorder({ stages: LIST, inOrder: true, sink: (r) => void seen.push(r) });
    seen.length = 0;
    t2.record("00", "ok", {});
    t2.finish("cancelled");
    expect(seen.map((s) => [s.stageId, s.status, s.data])).toEqual([
      ["00", "ok", {}],
      ["01", "skipped", { reason: "cancelled" }],
      ["02", "skipped", { reason: "cancelled" }],
    ]);
  });
});
