import { describe, expect, it } from "vitest";
import { buildDocsIndex } from "../../../systems/workbench/docs";
import { prepare, type ModelPort } from "../../../systems/workbench/prepare";
import { getIndex } from "../../../systems/workbench/resolve-index";
import { StageTrace, type StageRecord } from "../../../systems/workbench/trace";
import type { Plan } from "../../../systems/workbench/types";
import { discountTask, pastTaskCap, sha, stageIds, workspace } from "./fixtures";

const docs = buildDocsIndex([
  {
    path: "clarifications.md",
    markdown: "# Уточняющие вопросы\n\n## Как ответить\n\nНажмите на вариант или ответьте текстом.\n",
  },
  { path: "compositions.md", markdown: "# Композиции\n\n## Версии композиции\n\nСтарые версии переносят в архив.\n" },
]);

function port(replies: unknown[]): ModelPort & { calls: number } {
  const f = (async () => {
    f.calls++;
    return replies.length ? replies.shift()! : null;
  }) as unknown as ModelPort & { calls: number };
  f.calls = 0;
  return f;
}

async function run(
  text: string,
  o: {
    planner?: unknown[];
    reranker?: unknown[];
    plan?: Plan;
    budget?: number;
    referents?: Parameters<typeof prepare>[0]["referents"];
  } = {},
) {
  const planner = port(o.planner ?? []);
  const reranker = port(o.reranker ?? []);
  const stages: StageRecord[] = [];
  const { index, cached } = getIndex(workspace, sha);
  const r = await prepare({
    text,
    planVersion: o.plan?.planVersion ?? 1,
    ...(o.plan ? { plan: o.plan } : {}),
    workspace,
    snapshotSha256: sha,
    index,
    indexCached: cached,
    docs,
    referents: o.referents ?? [],
    history: [],
    preparatoryBudget: o.budget ?? 2,
    interaction: { status: "new" },
    ports: { planner, reranker },
    trace: new StageTrace((s) => stages.push(s)),
  });
  return { r, planner: planner.calls, reranker: reranker.calls, stages };
}

const compound = (mention: string) => ({
  tasks: [
    {
      id: "task-1",
      intent: "find_entity",
      sourceMode: "domain",
      entityType: "Composition",
      mentions: [mention],
      dependsOn: [],
    },
    {
      id: "task-2",
      intent: "inspect_entity",
      sourceMode: "domain",
      entityType: "Composition",
      mentions: [mention],
      dependsOn: ["task-1"],
    },
  ],
});

// The seed's table of model calls, row by row.
describe("model-call budget (seed 001 table)", () => {
  it("exact identity: 0 preparatory, then the answer", async () => {
    const x = await run("Покажи composition-alpha");
    expect([x.planner, x.reranker, x.r.outcome]).toEqual([0, 0, "answer"]);
  });
  it("a clear documentation question: 0 preparatory, docs only", async () => {
    const x = await run("Объясни, как ответить на уточняющий вопрос");
    expect([x.planner, x.reranker, x.r.outcome]).toEqual([0, 0, "answer"]);
    expect(x.stages.find((s) => s.stageId === "06")!.status).toBe("skipped");
    expect(x.r.modelRequest!.context.map((b) => b.kind)).toEqual(["doc"]);
  });
  it("a complex compound request: 1 planner", async () => {
    const x = await run("Найди композицию «Учёт остатков», затем покажи её", { planner: [compound("Учёт остатков")] });
    expect([x.planner, x.reranker, x.r.outcome, x.r.plan.plannedBy]).toEqual([1, 0, "answer", "llm"]);
  });
  it("an ambiguous entity: 1 reranker, its validated choice resolves", async () => {
    const x = await run("Покажи композицию «Расчёт скидки»", { reranker: [{ choice: "c2" }] });
    expect([x.planner, x.reranker, x.r.outcome]).toEqual([0, 1, "answer"]);
    const chosen = x.r.resolution!.tasks[0]!;
    expect(chosen).toMatchObject({ status: "resolved", resolvedBy: "reranker" });
    expect(x.r.plan.tasks[0]!.selection).toMatchObject({ source: "reranker", identity: chosen.resolvedIdentity });
  });
  it("a complex plan and an ambiguous entity: up to 2", async () => {
    const x = await run("Найди композицию «Расчёт скидки», затем покажи её", {
      planner: [compound("Расчёт скидки")],
      reranker: [{ choice: "c1" }],
    });
    expect([x.planner, x.reranker, x.r.outcome]).toEqual([1, 1, "answer"]);
  });
  it("a needed clarification: preparatory calls, no final call", async () => {
    const x = await run("Покажи композицию «Расчёт скидки»", { reranker: [{ choice: "clarify" }] });
    expect([x.reranker, x.r.outcome]).toEqual([1, "clarify"]);
    expect(x.r.modelRequest).toBeUndefined();
    expect(x.stages.filter((s) => ["10", "11", "12"].includes(s.stageId))).toEqual([]);
  });
  it("the budget is hard: with none left, no reranker is called and the user is asked", async () => {
    const x = await run("Покажи композицию «Расчёт скидки»", { budget: 0, reranker: [{ choice: "c1" }] });
    expect([x.reranker, x.r.outcome]).toEqual([0, "clarify"]);
  });
});

describe("planner output is validated and never trusted blindly", () => {
  it("invalid planner output falls back to the deterministic plan", async () => {
    const x = await run("Найди сущность «Договор», затем покажи её", {
      planner: [
        {
          tasks: [
            { id: "task-1", intent: "find_entity", sourceMode: "domain", mentions: ["entity-contract"], dependsOn: [] },
          ],
        },
      ],
    });
    expect(x.r.plan.plannedBy).toBe("deterministic");
    expect(x.r.resolution!.tasks.map((t) => t.resolvedIdentity)).toEqual(["entity-contract", "entity-contract"]);
    const s03 = x.stages.find((s) => s.stageId === "03")!.data as {
      planner: { accepted: boolean; issues: Array<{ code: string }> };
    };
    expect(s03.planner.accepted).toBe(false);
    expect(s03.planner.issues[0]!.code).toBe("declared_identity");
  });
  it("a reranker id outside the closed list is ignored → clarification", async () => {
    const x = await run("Покажи композицию «Расчёт скидки»", { reranker: [{ choice: "composition-discount" }] });
    expect(x.r.outcome).toBe("clarify");
  });
});

describe("prepare outcomes", () => {
  it("folder scope passes the folder's documents to the model", async () => {
    const x = await run("Перечисли композиции в папке «Продажи»");
    const list = x.r.modelRequest!.context.find((b) => b.kind === "list");
    expect(list && list.kind === "list" && list.items.map((i) => i.identity)).toEqual(
      expect.arrayContaining(["composition-alpha", "composition-nested"]),
    );
  });
  it("an unsupported type gives a plain answer, no model request", async () => {
    const x = await run("Найди процесс «Закрытие месяца»");
    expect(x.r.outcome).toBe("plain");
    expect(x.r.plainAnswer).toMatch(/Пока не поддерживается/);
  });
  it("stages 02–11 are recorded in order, with the contract's payload shapes", async () => {
    const x = await run("Покажи composition-alpha");
    expect(x.stages.map((s) => s.stageId)).toEqual(stageIds(11));
    const plan = x.stages[3]!.data as { planVersion: number; plannedBy: string; tasks: unknown[] };
    expect(plan).toMatchObject({ planVersion: 1, plannedBy: "deterministic" });
    const res = x.stages[6]!.data as {
      tasks: Array<{
        taskId: string;
        mention: string;
        status: string;
        candidates: Array<{ score: number; signals: string[] }>;
      }>;
    };
    expect(res.tasks[0]).toMatchObject({ taskId: "task-1", mention: "composition-alpha", status: "resolved" });
    expect(x.stages[9]!.data).toMatchObject({ passed: true, reasons: [] });
    expect((x.stages[10]!.data as { prompts: Array<{ id: string; sha256: string }> }).prompts[0]).toMatchObject({
      id: "workbench.answer",
    });
    expect(x.stages[11]!.data).toMatchObject({ modelRequest: { workspace: { generation: "7", snapshotSha256: sha } } });
  });
  it("a patched plan (a user's selection) is resolved without planning again", async () => {
    const plan: Plan = {
      planVersion: 2,
      plannedBy: "deterministic",
      tasks: [
        discountTask({
          selection: {
            identity: "composition-discount-v1",
            candidateId: "c2",
            clarificationId: "q",
            planVersion: 2,
            source: "user",
          },
        }),
      ],
    };
    const x = await run("Покажи композицию «Расчёт скидки»", { plan });
    expect([x.planner, x.reranker, x.r.outcome]).toEqual([0, 0, "answer"]);
    expect(x.r.targets.map((t) => t.identity)).toEqual(["composition-discount-v1"]);
  });
});

describe("issue 14: preparation keeps what it can do", () => {
  it("a bare name that is a workspace document's whole name is looked up (mixed), 0 preparatory calls", async () => {
    const x = await run("Учёт остатков");
    expect([x.planner, x.reranker, x.r.outcome]).toEqual([0, 0, "answer"]);
    expect(x.r.plan.tasks[0]).toMatchObject({
      intent: "inspect_entity",
      sourceMode: "mixed",
      mentions: ["Учёт остатков"],
    });
    expect(x.r.modelRequest!.context.some((b) => b.kind === "entity" && b.identity === "composition-stock")).toBe(true);
    // a bare phrase that names no document stays a documentation question
    const y = await run("Как ответить на уточняющий вопрос");
    expect(y.r.plan.tasks[0]!.intent).toBe("explain_documentation");
  });
  it("a half-unsupported request answers its supported half and says the change is not made", async () => {
    const x = await run("Найди композицию «Учёт остатков» и удали её");
    expect(x.r.outcome).toBe("answer");
    expect(x.r.plan.tasks.map((t) => t.intent)).toEqual(["find_entity", "unsupported"]);
    expect(x.r.adequacy.reasons).toEqual(["unsupported_task"]);
    expect(x.r.notice).toMatch(/изменения не вносятся/);
    expect(x.r.modelRequest!.notices).toEqual([x.r.notice]);
    expect(x.r.modelRequest!.context.some((b) => b.kind === "entity" && b.identity === "composition-stock")).toBe(true);
    const y = await run("Покажи композицию «Учёт остатков» и процесс «Закрытие месяца»");
    expect(y.r.outcome).toBe("answer");
    expect(y.r.notice).toMatch(/Пока не поддерживается: процессы/);
    expect(y.r.notice).not.toContain("?");
  });
  it("a fully unsupported request is a plain answer, an unknown type never shown as «?»", async () => {
    const x = await run("Удали композицию «Учёт остатков»");
    expect(x.r.outcome).toBe("plain");
    expect(x.r.plainAnswer).toMatch(/изменения не вносятся/);
    const y = await run("Найди «Закрытие месяца»");
    expect(y.r.outcome).toBe("plain");
    expect(y.r.plainAnswer).not.toMatch(/«\?»/);
  });
  it("targets beyond the task cap are named in the notice", async () => {
    const names = [...pastTaskCap, "Склад"];
    const x = await run(`Покажи ${names.map((n) => `«${n}»`).join(", ")}`);
    expect(x.r.plan.omittedMentions).toEqual(["Продажи за квартал", "Склад"]);
    expect(x.r.notice).toMatch(/не рассмотрены: «Продажи за квартал», «Склад»/);
  });
});
