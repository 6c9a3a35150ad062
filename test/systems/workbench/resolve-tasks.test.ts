import { describe, expect, it } from "vitest";
import { normalize } from "../../../systems/workbench/normalize";
import { deterministicPlan } from "../../../systems/workbench/plan";
import { buildIndex } from "../../../systems/workbench/resolve-index";
import { isReference, resolveTasks } from "../../../systems/workbench/resolve-tasks";
import type { Plan } from "../../../systems/workbench/types";
import { sha, workspace } from "./fixtures";

const idx = buildIndex(workspace, sha);
const planOf = (text: string) => deterministicPlan(normalize(text)).plan;

describe("isReference", () => {
  it("whole pronouns and demonstratives only", () => {
    expect(isReference("она")).toBe(true);
    expect(isReference("этот отчёт")).toBe(true);
    expect(isReference("предыдущая")).toBe(true);
    expect(isReference("Табель")).toBe(false);
    expect(isReference("Тормоза")).toBe(false);
    expect(isReference("Этикетка")).toBe(false);
    expect(isReference("Том 1")).toBe(false);
    expect(isReference("Найденные ошибки")).toBe(false);
    expect(isReference("та же форма")).toBe(true);
  });
});

describe("resolveTasks (stage 06)", () => {
  it("folder scope: the list holds the folder's documents of the type, nested folders included", () => {
    const r = resolveTasks(planOf("Перечисли композиции в папке «Продажи»"), idx);
    expect(r.tasks[0]).toMatchObject({ status: "resolved", resolvedIdentity: "folder-sales" });
    expect(r.tasks[1]!.items).toEqual(
      expect.arrayContaining(["composition-discount", "composition-alpha", "composition-nested"]),
    );
    expect(r.tasks[1]!.items).not.toContain("composition-discount-v1");
    expect(r.tasks[1]!.items).not.toContain("report-quarter");
  });

  it("a child waits for an unresolved folder (missing relation) instead of searching everywhere", () => {
    const r = resolveTasks(planOf("Перечисли композиции в папке «Бухгалтерия»"), idx);
    expect(r.tasks[0]!.status).toBe("not_found");
    expect(r.blocked).toEqual([{ taskId: "task-2", waitsFor: "task-1" }]);
  });

  it("a back-reference reuses its antecedent's target", () => {
    const r = resolveTasks(planOf("Найди сущность «Договор», затем покажи её"), idx);
    expect(r.tasks.map((t) => [t.taskId, t.resolvedIdentity, t.resolvedBy])).toEqual([
      ["task-1", "entity-contract", "exact"],
      ["task-2", "entity-contract", "dependency"],
    ]);
  });

  it("a conversation reference picks the latest referent matching the pronoun's gender", () => {
    const plan = planOf("А в какой папке она лежит?");
    const referents = [
      { identity: "report-quarter", documentType: "Report", displayName: "Продажи за квартал", turn: 5 },
      { identity: "composition-alpha", documentType: "Composition", displayName: "Объект Альфа", turn: 5 },
      { identity: "entity-contract", documentType: "Entity", displayName: "Договор", turn: 2 },
    ];
    const r = resolveTasks(plan, idx, referents);
    expect(r.tasks[0]).toMatchObject({
      status: "resolved",
      resolvedIdentity: "composition-alpha",
      resolvedBy: "conversation",
    });
    expect(resolveTasks(plan, idx, []).tasks[0]!.status).toBe("not_found");
  });

  it("a user's selection is re-checked against the snapshot; a vanished one asks again", () => {
    const plan: Plan = { ...planOf("Покажи композицию «Расчёт скидки»"), planVersion: 2 };
    plan.tasks[0]!.selection = {
      identity: "composition-discount-v1",
      candidateId: "c2",
      clarificationId: "q1",
      planVersion: 2,
      source: "user",
    };
    expect(resolveTasks(plan, idx).tasks[0]).toMatchObject({
      status: "resolved",
      resolvedIdentity: "composition-discount-v1",
      resolvedBy: "clarification",
    });
    const gone = buildIndex(
      { ...workspace, documents: workspace.documents.filter((d) => d.identity !== "composition-discount-v1") },
      "gone",
    );
    const r = resolveTasks(plan, gone).tasks[0]!;
    expect(r).toMatchObject({ status: "not_found", lostSelection: "composition-discount-v1" });
    expect(r.candidates.map((c) => c.identity)).toEqual(["composition-discount"]);
  });
});
