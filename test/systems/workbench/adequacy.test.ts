import { describe, expect, it } from "vitest";
import { adequacyGate } from "../../../systems/workbench/adequacy";
import { normalize } from "../../../systems/workbench/normalize";
import { deterministicPlan } from "../../../systems/workbench/plan";
import { buildIndex } from "../../../systems/workbench/resolve-index";
import { resolveTasks } from "../../../systems/workbench/resolve-tasks";
import type { WorkspaceSnapshot } from "../../../systems/workbench/types";
import { sha, workspace } from "./fixtures";

const idx = buildIndex(workspace, sha);
const gate = (
  text: string,
  extra: {
    docs?: Parameters<typeof adequacyGate>[0]["docs"];
    budgetTokens?: number;
    index?: ReturnType<typeof buildIndex>;
  } = {},
) => {
  const plan = deterministicPlan(normalize(text)).plan;
  const index = extra.index ?? idx;
  return adequacyGate({
    plan,
    resolution: resolveTasks(plan, index),
    docs: extra.docs ?? null,
    index,
    ...(extra.budgetTokens ? { budgetTokens: extra.budgetTokens } : {}),
  });
};

describe("context adequacy gate (stage 09)", () => {
  it("passes a resolved target with its block", () => {
    const a = gate("Покажи composition-alpha");
    expect(a).toMatchObject({ passed: true, reasons: [] });
    expect(a.blocks[0]).toMatchObject({
      kind: "entity",
      identity: "composition-alpha",
      pinned: true,
      folder: { identity: "folder-sales", displayName: "Продажи" },
    });
  });

  it("an ambiguous target → a clarification about that slot, with the closed list and folders", () => {
    const a = gate("Покажи композицию «Расчёт скидки»");
    expect(a.passed).toBe(false);
    expect(a.reasons).toEqual(["ambiguous_target"]);
    expect(a.clarification).toMatchObject({
      taskId: "task-1",
      slot: "entity",
      question: "Какую композицию вы имеете в виду?",
    });
    expect(a.clarification!.candidates.map((c) => c.folderName).sort()).toEqual(["Архив", "Продажи"]);
  });

  it("not found, unsupported task/type, missing relation and missing documentation have their codes", () => {
    expect(gate("Найди композицию «Прогноз»").reasons).toEqual(["target_not_found"]);
    const unsupported = gate("Найди процесс «Закрытие месяца»");
    expect(unsupported).toMatchObject({ passed: false, reasons: ["unsupported_type"] });
    expect(unsupported.clarification).toBeUndefined();
    expect(unsupported.plainAnswer).toMatch(/Пока не поддерживается/);
    expect(gate("Удали композицию «Расчёт скидок»").reasons).toEqual(["unsupported_task"]);
    const rel = gate("Перечисли композиции в папке «Бухгалтерия»");
    expect(rel.reasons).toEqual(expect.arrayContaining(["target_not_found", "missing_relation"]));
    expect(rel.clarification).toMatchObject({ taskId: "task-1", slot: "folder" });
    expect(gate("Объясни синтаксис выражений", { docs: [] })).toMatchObject({
      reasons: ["documentation_not_found"],
      clarification: { slot: "topic" },
    });
  });

  it("an exactly resolved target is never evicted by the budget, even when it alone exceeds it", () => {
    const big: WorkspaceSnapshot = {
      generation: "1",
      documents: [
        {
          documentType: "Entity",
          identity: "entity-huge",
          displayName: "Огромная",
          folderIdentity: null,
          content: { text: "я".repeat(20_000) },
        },
      ],
    };
    const a = gate("Покажи entity-huge", { index: buildIndex(big, "big"), budgetTokens: 100 });
    expect(a.passed).toBe(true);
    expect(a.blocks.map((b) => b.kind === "entity" && b.identity)).toEqual(["entity-huge"]);
    expect(a.warnings).toContain("pinned_targets_exceed_budget");
  });

  it("a target resolved only by a weaker signal may be pushed out — then the gate asks instead of answering", () => {
    const a = gate("Покажи композицию «Учёта остатков»", { budgetTokens: 10 });
    expect(a.reasons).toEqual(["target_evicted"]);
    expect(a.clarification).toMatchObject({
      reason: "target_evicted",
      candidates: [{ identity: "composition-stock" }],
    });
  });

  it("documentation blocks are dropped before entities", () => {
    const docs = [{ docId: "d#1", heading: "Д", text: "т".repeat(4000), score: 1 }];
    const a = gate("Объясни композицию «Расчёт скидок»", { docs, budgetTokens: 200 });
    expect(a.blocks.map((b) => b.kind)).toEqual(["entity"]);
    expect(a.evicted).toEqual([{ kind: "doc", ref: "d#1" }]);
  });
});
