import { describe, expect, it } from "vitest";
import {
  INTENT_TRAITS,
  allowedSources,
  isRefused,
  listsType,
  namesTargets,
  readsDomain,
} from "../../../systems/workbench/intents";
import { validatePlan } from "../../../systems/workbench/plan-validate";
import { PLANNER_PROMPT } from "../../../systems/workbench/prompts";
import { INTENTS, SOURCE_MODES, type Task } from "../../../systems/workbench/types";

/** The intent table is the one place an intent's nature is written; the stages and the planner read it. */
describe("Workbench intents", () => {
  it("every intent has one row, and the planner prompt offers exactly the intents of the table", () => {
    expect(Object.keys(INTENT_TRAITS).sort()).toEqual([...INTENTS].sort());
    const line = PLANNER_PROMPT.text.split("\n").find((l) => l.startsWith("intent:"))!;
    expect(line.replace(/^intent: |\.$/g, "").split(" | ")).toEqual([...INTENTS]);
  });

  it("plan validation follows the table: source modes per intent, named targets need a mention", () => {
    for (const intent of INTENTS)
      for (const sourceMode of SOURCE_MODES) {
        const task: Task = { id: "task-1", intent, sourceMode, mentions: ["«Отгрузка»"], dependsOn: [] };
        const codes = validatePlan({ planVersion: 1, plannedBy: "llm", tasks: [task] }).map((i) => i.code);
        expect(codes.includes("source_mode_mismatch"), `${intent}/${sourceMode}`).toBe(
          !allowedSources(intent).includes(sourceMode),
        );
      }
    const bare = (intent: Task["intent"]): Task => ({
      id: "task-1",
      intent,
      sourceMode: allowedSources(intent)[0]!,
      mentions: [],
      dependsOn: [],
    });
    for (const intent of INTENTS)
      expect(
        validatePlan({ planVersion: 1, plannedBy: "llm", tasks: [bare(intent)] }).some(
          (i) => i.code === "missing_mention",
        ),
        intent,
      ).toBe(namesTargets(intent));
  });

  it("a refused task reads nothing, a listing names a type, and an unknown intent has no traits", () => {
    for (const intent of INTENTS) {
      if (isRefused(intent)) expect(readsDomain(intent) || namesTargets(intent)).toBe(false);
      if (listsType(intent)) expect(readsDomain(intent)).toBe(true);
    }
    expect(INTENTS.filter(isRefused)).toEqual(["unsupported"]);
    expect(readsDomain("delete_entity")).toBe(false);
    expect(allowedSources("delete_entity")).toEqual([]);
  });
});
