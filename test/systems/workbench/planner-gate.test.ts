import { describe, expect, it } from "vitest";
import { normalize } from "../../../systems/workbench/normalize";
import { deterministicPlan } from "../../../systems/workbench/plan";
import { acceptPlannerOutput, plannerGate } from "../../../systems/workbench/planner-gate";

const gate = (text: string) => plannerGate(deterministicPlan(normalize(text)));
const ctx = (text: string) => ({
  norm: normalize(text),
  planVersion: 1,
  knownTypes: new Set(["Folder", "Composition", "Entity", "Form", "Report"]),
  isIdentity: (s: string) => ["entity-contract", "composition-alpha"].includes(s),
});
const task = (over: Record<string, unknown> = {}) => ({
  id: "task-1",
  intent: "find_entity",
  sourceMode: "domain",
  entityType: "Entity",
  mentions: ["Договор"],
  dependsOn: [],
  ...over,
});

describe("planner gate", () => {
  it("stays closed for exact and clear requests", () => {
    expect(gate("Покажи composition-order-approval")).toEqual({ call: false, reasons: [] });
    expect(gate("Найди композицию «Учёт остатков»").call).toBe(false);
    expect(gate("Перечисли композиции в папке «Продажи»").call).toBe(false);
    expect(gate("Объясни, как ответить на уточняющий вопрос").call).toBe(false);
  });
  it("opens for linked tasks, an implicit intent, a history reference or low confidence", () => {
    expect(gate("Найди сущность «Договор», затем покажи её").reasons).toEqual(["linked_tasks"]);
    expect(gate("А в какой папке она лежит?").reasons).toEqual(
      expect.arrayContaining(["implicit_intent", "history_reference", "low_confidence"]),
    );
    expect(gate("Что такое композиция?").reasons).toContain("implicit_intent");
  });
});

describe("planner output validation", () => {
  const text = "Найди сущность «Договор», затем покажи её";
  it("accepts a valid plan and links a same-target dependant as a back-reference", () => {
    const r = acceptPlannerOutput(
      { tasks: [task(), task({ id: "task-2", intent: "inspect_entity", dependsOn: ["task-1"] })] },
      ctx(text),
    );
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.plan.plannedBy).toBe("llm");
      expect(r.plan.tasks[1]).toMatchObject({ refersTo: "task-1", dependsOn: ["task-1"] });
    }
  });
  it("a task naming several targets becomes one task per target, dependants wait for all of them", () => {
    const two = "Сравни сущности «Договор» и «Заказ», затем перечисли формы";
    const r = acceptPlannerOutput(
      {
        tasks: [
          task({ mentions: ["Договор", "Заказ"] }),
          {
            id: "task-2",
            intent: "list_entities",
            sourceMode: "domain",
            entityType: "Form",
            mentions: [],
            dependsOn: ["task-1"],
          },
        ],
      },
      ctx(two),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan.tasks.map((t) => [t.id, t.mentions, t.dependsOn])).toEqual([
      ["task-1", ["Договор"], []],
      ["task-1-2", ["Заказ"], []],
      ["task-2", [], ["task-1", "task-1-2"]],
    ]);
  });
  it("a pronoun mention is replaced by the antecedent's mention", () => {
    const r = acceptPlannerOutput(
      { tasks: [task(), task({ id: "task-2", intent: "inspect_entity", mentions: ["её"], dependsOn: ["task-1"] })] },
      ctx(text),
    );
    expect(r.ok && r.plan.tasks[1]!.mentions).toEqual(["Договор"]);
  });
  it("never accepts an identity: as a key, or as a mention the user did not type", () => {
    expect(acceptPlannerOutput({ tasks: [task({ identity: "entity-contract" })] }, ctx(text))).toMatchObject({
      ok: false,
      issues: [{ code: "schema" }],
    });
    expect(acceptPlannerOutput({ tasks: [task({ mentions: ["entity-contract"] })] }, ctx(text))).toMatchObject({
      ok: false,
      issues: [{ code: "declared_identity" }],
    });
    expect(
      acceptPlannerOutput({ tasks: [task({ mentions: ["composition-alpha"] })] }, ctx("Покажи composition-alpha")).ok,
    ).toBe(true);
  });
  it("rejects invented mentions, unknown intents, cycles and bad JSON", () => {
    expect(acceptPlannerOutput({ tasks: [task({ mentions: ["Счёт-фактура"] })] }, ctx(text))).toMatchObject({
      ok: false,
      issues: [{ code: "ungrounded_mention" }],
    });
    expect(acceptPlannerOutput({ tasks: [task({ intent: "delete_entity" })] }, ctx(text)).ok).toBe(false);
    expect(
      acceptPlannerOutput(
        { tasks: [task({ dependsOn: ["task-2"] }), task({ id: "task-2", dependsOn: ["task-1"] })] },
        ctx(text),
      ).ok,
    ).toBe(false);
    expect(acceptPlannerOutput("{oops", ctx(text))).toMatchObject({ ok: false, issues: [{ code: "invalid_json" }] });
    expect(acceptPlannerOutput({}, ctx(text)).ok).toBe(false);
  });
  it("accepts a declined form of a typed word (the planner may normalize case)", () => {
    expect(acceptPlannerOutput({ tasks: [task({ mentions: ["Договора"] })] }, ctx(text)).ok).toBe(true);
  });
});
