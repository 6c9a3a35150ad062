import { describe, expect, it } from "vitest";
import { splitClauses } from "../../../systems/workbench/clause";
import { normalize } from "../../../systems/workbench/normalize";
import { deterministicPlan, parseClause } from "../../../systems/workbench/plan";
import { dependentsOf, topoOrder, validatePlan } from "../../../systems/workbench/plan-validate";
import type { Plan } from "../../../systems/workbench/types";

const plan = (text: string) => deterministicPlan(normalize(text));

describe("splitClauses", () => {
  it.each([
    ["Найди «А», затем покажи её", 2],
    ["Найди «А» потом покажи её", 2],
    ["Найди «А», после этого перечисли формы", 2],
    ["Найди «А», и покажи её", 2],
    ["Найди «А» и «Б»", 1],
    ["Найди «Сначала затем потом»", 1],
  ])("%s → %i clause(s)", (text, n) => {
    expect(splitClauses(text).clauses).toHaveLength(n);
  });
});

describe("deterministic plan (stage 03)", () => {
  it("exact identity → one inspect task, domain, confident", () => {
    const p = plan("Покажи composition-order-approval");
    expect(p.plan.tasks).toEqual([
      {
        id: "task-1",
        intent: "inspect_entity",
        sourceMode: "domain",
        mentions: ["composition-order-approval"],
        dependsOn: [],
      },
    ]);
    expect(p.confidence).toBeGreaterThan(0.9);
  });

  it("type noun + quoted name; filler words dropped from an unquoted name", () => {
    expect(plan("Найди композицию «Учёт остатков»").plan.tasks[0]).toMatchObject({
      intent: "find_entity",
      entityType: "Composition",
      mentions: ["Учёт остатков"],
    });
    expect(plan("покажи мне пожалуйста описание формы заказ клиента").plan.tasks[0]).toMatchObject({
      intent: "inspect_entity",
      entityType: "Form",
      mentions: ["заказ клиента"],
    });
  });

  it("folder scope: find the folder first, the child task depends on it and is restricted by it", () => {
    const p = plan("Перечисли композиции в папке «Продажи»").plan;
    expect(p.tasks.map((t) => t.intent)).toEqual(["find_entity", "list_entities"]);
    expect(p.tasks[0]).toMatchObject({ entityType: "Folder", mentions: ["Продажи"] });
    expect(p.tasks[1]).toMatchObject({ entityType: "Composition", folderScope: "task-1", dependsOn: ["task-1"] });
    // unquoted folder name and a find inside a folder
    const q = plan("Найди композицию «Расчёт скидки» в папке Архив").plan;
    expect(q.tasks[0]).toMatchObject({ entityType: "Folder", mentions: ["Архив"] });
    expect(q.tasks[1]).toMatchObject({ intent: "find_entity", mentions: ["Расчёт скидки"], folderScope: "task-1" });
  });

  it("compound request: a pronoun refers to the previous task and depends on it", () => {
    const p = plan("Найди сущность «Договор», затем покажи её");
    expect(p.plan.tasks[1]).toMatchObject({
      intent: "inspect_entity",
      refersTo: "task-1",
      dependsOn: ["task-1"],
      mentions: ["Договор"],
      entityType: "Entity",
    });
    expect(p.clauses).toBe(2);
    expect(p.historyReference).toBe(false);
  });

  it("a reference to earlier turns is a conversation task with an implicit intent", () => {
    const p = plan("А в какой папке она лежит?");
    expect(p.plan.tasks[0]).toMatchObject({ intent: "inspect_entity", sourceMode: "conversation", mentions: ["она"] });
    expect(p.historyReference).toBe(true);
    expect(p.implicitIntent).toBe(true);
  });

  it("documentation questions vs a document considered with the docs (mixed)", () => {
    expect(plan("Объясни, как ответить на уточняющий вопрос").plan.tasks[0]).toMatchObject({
      intent: "explain_documentation",
      sourceMode: "documentation",
      mentions: [],
    });
    expect(plan("Объясни композицию «Расчёт скидки»").plan.tasks[0]).toMatchObject({
      intent: "inspect_entity",
      sourceMode: "mixed",
    });
    expect(plan("Объясни, как вызвать композицию из отчёта").plan.tasks[0]).toMatchObject({
      intent: "explain_documentation",
    });
  });

  it("several names in one clause become one task each", () => {
    const p = plan("Покажи «Расчёт скидки» и «Договор»").plan;
    expect(p.tasks.map((t) => [t.intent, t.mentions])).toEqual([
      ["inspect_entity", ["Расчёт скидки"]],
      ["inspect_entity", ["Договор"]],
    ]);
  });

  it("mutations are unsupported (domain changes are outside this flow); a destination folder is no scope", () => {
    expect(plan("Удали композицию «Расчёт скидки»").plan.tasks[0]).toMatchObject({
      intent: "unsupported",
      sourceMode: "none",
    });
    expect(plan("Перенеси composition-alpha в папку «Архив»").plan.tasks.map((t) => t.intent)).toEqual(["unsupported"]);
  });

  it("'содержимое папки X' with any command is the folder's list", () => {
    const p = plan("Покажи содержимое папки «Продажи»").plan;
    expect(p.tasks.map((t) => [t.intent, t.entityType ?? null])).toEqual([
      ["find_entity", "Folder"],
      ["list_entities", null],
    ]);
    expect(p.tasks[1]).toMatchObject({ folderScope: "task-1", mentions: [] });
  });

  it("plural type with a find verb and no name is a list", () => {
    expect(parseClause("найди все отчёты").intent).toBe("list_entities");
    expect(parseClause("какие формы есть в папке «Продажи»")).toMatchObject({
      intent: "list_entities",
      folderName: "Продажи",
    });
  });

  it("low confidence for a bare unknown text", () => {
    expect(plan("привет").confidence).toBeLessThan(0.7);
  });
});

describe("issue 14: odd phrasings", () => {
  const shape = (text: string) => plan(text).plan.tasks.map((t) => [t.intent, t.entityType ?? null, t.mentions]);
  it("a mutation beside a supported command becomes an unsupported task; the supported part stays", () => {
    expect(shape("Найди композицию «Бюджет» и удали её")).toEqual([
      ["find_entity", "Composition", ["Бюджет"]],
      ["unsupported", "Composition", ["Бюджет"]],
    ]);
    expect(plan("Найди композицию «Бюджет» и удали её").historyReference).toBe(false);
    expect(shape("Найди и переименуй отчёт «Итоги»").map((t) => t[0])).toEqual(["find_entity", "unsupported"]);
    expect(shape("Покажи форму «Заказ», затем измени формулу в ней").map((t) => t[0])).toEqual([
      "inspect_entity",
      "unsupported",
    ]);
    expect(shape("Удали композицию «Бюджет»")).toEqual([["unsupported", "Composition", ["Бюджет"]]]);
  });
  it("each target keeps the type noun nearest before it", () => {
    expect(shape("Покажи отчёт «Книга продаж» и композицию «Бюджет»")).toEqual([
      ["inspect_entity", "Report", ["Книга продаж"]],
      ["inspect_entity", "Composition", ["Бюджет"]],
    ]);
    expect(shape("Найди форму «А», сущность «Б» и отчёт report-x")).toEqual([
      ["find_entity", "Form", ["А"]],
      ["find_entity", "Entity", ["Б"]],
      ["find_entity", "Report", ["report-x"]],
    ]);
    expect(shape("Покажи отчёты «А» и «Б»").map((t) => t[1])).toEqual(["Report", "Report"]);
  });
  it("'ещё раз', 'снова', 'пожалуйста' never become a name: a demonstrative is a history reference", () => {
    for (const text of ["Покажи этот отчёт ещё раз", "Покажи этот отчёт снова, пожалуйста", "Покажи её ещё раз"]) {
      const p = plan(text);
      expect(p.historyReference, text).toBe(true);
      expect(p.plan.tasks[0]!.sourceMode, text).toBe("conversation");
      expect(p.plan.tasks[0]!.mentions.join(" "), text).not.toMatch(/раз|снова|пожалуйста/);
    }
  });
  it("an unquoted name with no command or type is offered to the domain lookup", () => {
    expect(plan("Бюджет продаж").bareNames).toEqual(["Бюджет продаж"]);
    expect(plan("Как вызвать композицию из отчёта?").bareNames).toEqual([]);
  });
  it("independent clauses are not linked; a back-reference is", () => {
    expect(plan("Найди композицию «А», затем покажи отчёт «Б»").linkedTasks).toBe(false);
    expect(plan("Найди композицию «А», затем покажи её").linkedTasks).toBe(true);
  });
  it("caps the deterministic tasks and reports the rest", () => {
    const names = Array.from({ length: 30 }, (_, i) => `«Док ${i + 1}»`).join(", ");
    const p = plan(`Покажи ${names}`).plan;
    expect(p.tasks.length).toBeLessThanOrEqual(8);
    expect(validatePlan(p)).toEqual([]);
    expect(p.omittedMentions).toHaveLength(30 - p.tasks.length);
    expect(p.omittedMentions![0]).toBe(`Док ${p.tasks.length + 1}`);
  });
});

describe("plan validation", () => {
  const base = (tasks: Plan["tasks"]): Plan => ({ planVersion: 1, plannedBy: "llm", tasks });
  it("accepts a valid DAG and orders it", () => {
    const p = plan("Перечисли композиции в папке «Продажи»").plan;
    expect(validatePlan(p)).toEqual([]);
    expect(topoOrder(p.tasks)!.map((t) => t.id)).toEqual(["task-1", "task-2"]);
  });
  type Task = Plan["tasks"][number];
  /** A one-task plan's task: find an entity by a mention, no dependencies; `over` changes what a case tests. */
  const task = (over: Partial<Task> = {}): Task =>
    ({ id: "task-1", intent: "find_entity", sourceMode: "domain", mentions: ["a"], dependsOn: [], ...over }) as Task;
  const codes = (tasks: Task[], types?: Set<string>) => validatePlan(base(tasks), types).map((i) => i.code);
  it("rejects cycles, unknown dependencies, unknown intents/types and mismatched source modes", () => {
    const cycle = [task({ dependsOn: ["task-2"] }), task({ id: "task-2", mentions: ["b"], dependsOn: ["task-1"] })];
    expect(codes(cycle)).toContain("cycle");
    expect(codes([task({ dependsOn: ["task-9"] })])).toContain("unknown_dependency");
    expect(codes([task({ intent: "delete_entity" as never })])).toContain("unknown_intent");
    expect(codes([task({ entityType: "Dashboard" })])).toContain("unknown_type");
    expect(codes([task({ entityType: "Process" })], new Set(["Process"]))).toEqual([]);
    expect(codes([task({ intent: "explain_documentation", mentions: [] })])).toContain("source_mode_mismatch");
    expect(
      codes([
        task({ entityType: "Composition" }),
        task({ id: "task-2", intent: "list_entities", mentions: [], dependsOn: ["task-1"], folderScope: "task-1" }),
      ]),
    ).toContain("folder_scope_not_folder");
  });
  it("finds transitive dependants", () => {
    const tasks = base([
      { id: "task-1", intent: "find_entity", sourceMode: "domain", mentions: ["a"], dependsOn: [] },
      { id: "task-2", intent: "inspect_entity", sourceMode: "domain", mentions: ["a"], dependsOn: ["task-1"] },
      { id: "task-3", intent: "inspect_entity", sourceMode: "domain", mentions: ["a"], dependsOn: ["task-2"] },
    ]).tasks;
    expect(dependentsOf(tasks, "task-1").sort()).toEqual(["task-2", "task-3"]);
  });
});

describe("issue 14: a pronoun scope keeps an unquoted name", () => {
  it("«покажи в ней композицию Расчёт» names «Расчёт»", () => {
    expect(parseClause("покажи в ней композицию Расчёт").mentions).toEqual(["Расчёт"]);
  });
});

describe("issue 14: an unquoted name beside a mutation", () => {
  it("«Найди композицию Бюджет и удали её»: find + unsupported, no history reference", () => {
    const p = plan("Найди композицию Бюджет и удали её");
    expect(p.plan.tasks.map((t) => [t.intent, t.mentions])).toEqual([
      ["find_entity", ["Бюджет"]],
      ["unsupported", ["Бюджет"]],
    ]);
    expect(p.historyReference).toBe(false);
  });
});

/** The planned tasks as [intent, entity type, mentions] rows. */
const tasks = (text: string) =>
  deterministicPlan(normalize(text)).plan.tasks.map((t) => [t.intent, t.entityType ?? null, t.mentions]);

/** One name «Отгрузка» meant as both a form and an entity, in that order. */
const formAndEntity = (intent: string) => [
  [intent, "Form", ["Отгрузка"]],
  [intent, "Entity", ["Отгрузка"]],
];

describe("type nouns: negated and coordinated (issue 42)", () => {
  it("a negated type is not the one meant: «не отчёт, а форму «X»» is a form", () => {
    expect(parseClause("не отчёт, а форму «Отгрузка»").nameType).toBe("Form");
    expect(parseClause("форму, а не отчёт «Отгрузка»").nameType).toBe("Form");
  });
  it("one name for coordinated types is one target per type, quoted or not", () => {
    expect(tasks("Покажи форму и сущность «Отгрузка»")).toEqual(formAndEntity("inspect_entity"));
    expect(tasks("Найди форму или сущность Отгрузка")).toEqual(formAndEntity("find_entity"));
  });
  it("equal names with a type each keep their own types; distinct names keep theirs", () => {
    expect(tasks("Покажи форму «Отгрузка» и сущность «Отгрузка»")).toEqual(formAndEntity("inspect_entity"));
    expect(tasks("Покажи отчёт «А» и композицию «Б»")).toEqual([
      ["inspect_entity", "Report", ["А"]],
      ["inspect_entity", "Composition", ["Б"]],
    ]);
  });
});

describe("coordinated types in other words (issue 42, held-out round)", () => {
  const both = formAndEntity("inspect_entity");
  it("«и X, и Y «N»», «X, а также Y «N»» share the name", () => {
    expect(tasks("Покажи и форму, и сущность «Отгрузка»")).toEqual(both);
    expect(tasks("Покажи форму, а также сущность «Отгрузка»")).toEqual(both);
  });
  it("a type after the name, joined to it and naming nothing, shares it: «Y «N» и X»", () => {
    expect(tasks("Покажи сущность «Отгрузка» и форму")).toEqual([both[1], both[0]]);
  });
  it("«а также» before a command still opens a clause of its own", () => {
    expect(tasks("Найди форму «Отгрузка», а также покажи отчёт «Доставки»").map((t) => t[1])).toEqual([
      "Form",
      "Report",
    ]);
  });
});
