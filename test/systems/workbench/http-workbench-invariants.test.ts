// Issue 14 (Workbench): the seed's invariants against a misbehaving model and odd input, through
// the real server with a scripted model.
import { beforeEach, describe, expect, it } from "vitest";
import { useTestServer } from "../../utils/server";
import { eventsNamed } from "../../utils/sse";
import { pastTaskCap, workspace } from "./fixtures";
import { askWhichDiscount, newConversation, one, replyTo, send, stage, type Json } from "./http-workbench-helpers";

const server = useTestServer({ llm: true, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

beforeEach(() => llm.reset());

const doc = (
  documentType: string,
  identity: string,
  displayName: string,
  folderIdentity: string | null = null,
  content: Json = {},
) => ({ documentType, identity, displayName, folderIdentity, content });
const ws = {
  generation: "9",
  documents: [
    ...workspace.documents,
    doc("Composition", "cash-pooling", "Пулинг денежных средств", null, { description: "Перераспределение остатков" }),
    doc("Report", "report-cash", "Cash pooling"),
    doc("Report", "report-sales-book", "Книга продаж"),
    doc("Composition", "composition-budget", "Бюджет"),
    doc("Composition", "composition-sales-budget", "Бюджет продаж"),
    doc("Entity", "entity-swift", "SWIFT", null, { fields: ["bic"] }),
  ],
};

const ask = async (text: string, extra: Json = {}) => {
  const conv = (extra.conversationId as string | undefined) ?? (await newConversation(server.url));
  const r = await send(server.url, conv, { text, workspace: ws, debug: true, ...extra, conversationId: undefined });
  return { conv, r };
};
const tasksOf = (r: Awaited<ReturnType<typeof ask>>["r"]) => stage(r, "03")!.data.tasks as Json[];
const targetsOf = (r: Awaited<ReturnType<typeof ask>>["r"]) =>
  (stage(r, "06")!.data.tasks as Json[]).map((x) => x.resolvedIdentity ?? x.status);

describe("issue 14 (Workbench): claimed edits and mutations", () => {
  it.each([
    "Готово: я поменял формулу в [[cash-pooling]].",
    "Формула в [[cash-pooling]] обновлена.",
    "Композиция [[cash-pooling]] удалена по вашей просьбе.",
    "Внёс изменения в [[cash-pooling]].",
    "I've updated [[cash-pooling]].",
  ])("an answer claiming an edit fails validation: %s", async (answer) => {
    llm.script("answer", answer);
    const { r } = await ask("Покажи cash-pooling");
    const fin = one(r, "final")!;
    expect(fin.validation.ok).toBe(false);
    expect(fin.validation.issues.map((i: Json) => i.code)).toContain("claimed_change");
  });

  it("«Найди композицию «Бюджет» и удали её»: the find runs, the delete is an unsupported task, the answer says so", async () => {
    llm.script("answer", "Композиция «Бюджет» — [[composition-budget]].");
    const { r } = await ask("Найди композицию «Бюджет» и удали её");
    expect(tasksOf(r).map((x) => x.intent)).toEqual(["find_entity", "unsupported"]);
    const fin = one(r, "final")!;
    expect(fin.status).toBe("completed");
    expect(fin.modelCalls).toMatchObject({ preparatory: 0, final: 1 });
    expect(fin.answer).toMatch(/^Пока не поддерживается: изменение документов .*изменения не вносятся/);
    expect(fin.answer).toContain("[[composition-budget]]");
    expect(fin.validation.ok).toBe(true);
    // the notice is streamed too, before the model's tokens
    expect(
      eventsNamed(r, "token")
        .map((e) => (e as Json).delta)
        .join(""),
    ).toBe(fin.answer);
    const sent = JSON.parse(llm.calls[0]!.messages.at(-1)!.content) as Json;
    expect(sent.notices[0]).toMatch(/изменения не вносятся/);
  });

  it("a bare identity the model was never given fails validation", async () => {
    llm.script("answer", "Это composition-budget, а рядом composition-sales-budget.");
    const { r } = await ask("Покажи композицию «Бюджет»");
    const fin = one(r, "final")!;
    expect(fin.validation.issues).toEqual([{ code: "not_in_context", detail: "composition-sales-budget" }]);
  });
});

describe("issue 14 (Workbench): resolution", () => {
  it("«Покажи cash-pooling»: the exact identity wins over the Report «Cash pooling», 0 preparatory calls", async () => {
    llm.script("answer", "[[cash-pooling]] перераспределяет остатки.");
    const { r } = await ask("Покажи cash-pooling");
    expect(targetsOf(r)).toEqual(["cash-pooling"]);
    expect(one(r, "final")).toMatchObject({ status: "completed", modelCalls: { preparatory: 0, final: 1 } });
    expect(llm.calls.map((c) => c.role)).toEqual(["answer"]);
  });

  it("two types in one sentence: each target keeps its own type", async () => {
    llm.script("answer", "[[report-sales-book]] и [[composition-budget]].");
    const { r } = await ask("Покажи отчёт «Книга продаж» и композицию «Бюджет»");
    expect(tasksOf(r).map((x) => [x.entityType, x.mentions])).toEqual([
      ["Report", ["Книга продаж"]],
      ["Composition", ["Бюджет"]],
    ]);
    expect(targetsOf(r)).toEqual(["report-sales-book", "composition-budget"]);
    expect(one(r, "final")!.answer).not.toMatch(/Не удалось найти/);
  });

  it("«Свифт» finds the Latin-named «SWIFT»", async () => {
    llm.script("answer", "Сущность [[entity-swift]].");
    const { r } = await ask("Покажи сущность Свифт");
    expect(targetsOf(r)).toEqual(["entity-swift"]);
  });

  it("a bare name «Бюджет продаж» is looked up in the domain (with the docs), no planner call", async () => {
    llm.script("answer", "[[composition-sales-budget]].");
    const { r } = await ask("Бюджет продаж");
    expect(tasksOf(r)[0]).toMatchObject({ intent: "inspect_entity", sourceMode: "mixed" });
    expect(targetsOf(r)).toEqual(["composition-sales-budget"]);
    expect(one(r, "final")!.modelCalls).toMatchObject({ preparatory: 0 });
  });

  it("«Покажи этот отчёт ещё раз» refers to the report of the previous turn, not a report named «раз»", async () => {
    llm.script("answer", "[[report-sales-book]].", "Снова [[report-sales-book]].");
    const { conv } = await ask("Покажи отчёт «Книга продаж»");
    const { r } = await ask("Покажи этот отчёт ещё раз", { conversationId: conv });
    expect(JSON.stringify(tasksOf(r))).not.toContain("раз");
    expect(targetsOf(r)).toEqual(["report-sales-book"]);
  });

  it("independent clauses do not call the planner", async () => {
    llm.script("answer", "[[composition-budget]], [[report-sales-book]].");
    const { r } = await ask("Найди композицию «Бюджет», затем покажи отчёт «Книга продаж»");
    expect(stage(r, "03")!.data.gate).toEqual({ call: false, reasons: [] });
    expect(one(r, "final")!.modelCalls).toMatchObject({ preparatory: 0, final: 1 });
  });

  it("more names than the task cap: at most 8 tasks, the rest named before the answer", async () => {
    llm.script("answer", "Вот документы.");
    const names = [...pastTaskCap, "Книга продаж"];
    const { r } = await ask(`Покажи ${names.map((n) => `«${n}»`).join(", ")}`);
    expect(tasksOf(r)).toHaveLength(8);
    const fin = one(r, "final")!;
    expect(fin.answer).toMatch(/не рассмотрены: «Продажи за квартал», «Книга продаж»/);
    expect(fin.answer).toMatch(/Вот документы\.$/);
  });
});

describe("issue 14 (Workbench): duplicate identities in a trusted snapshot", () => {
  it("are refused with a structured 400 naming them, before any stage runs", async () => {
    const conv = await newConversation(server.url);
    const bad = {
      generation: "1",
      documents: [doc("Composition", "dup-a", "А"), doc("Report", "DUP-A", "Б"), doc("Form", "ok-1", "В")],
    };
    const r = await send(server.url, conv, { text: "Покажи dup-a", workspace: bad });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      error: {
        code: "invalid_request",
        details: {
          duplicateIdentities: [
            { identity: "dup-a", documents: [{ documentType: "Composition" }, { documentType: "Report" }] },
          ],
        },
      },
    });
    expect((r.json as Json).error.message).toMatch(
      /duplicate document identities: dup-a.*повторяются identity: dup-a/s,
    );
    expect(r.events).toEqual([]);
    expect(llm.count()).toBe(0);
  });
});

describe("issue 14 (Workbench): a model's choice that disappears", () => {
  it("after a workspace change, a new clarification — never a silent replacement", async () => {
    llm.script("reranker", '{"choice": "c1"}');
    const { conv, r } = await ask("Покажи композицию «Расчёт скидки» и сущность «Прогнозы»");
    const chosen = (stage(r, "06")!.data.tasks as Json[])[0]!;
    expect(chosen).toMatchObject({ status: "resolved", resolvedBy: "reranker" });
    const q = one(r, "clarification_required")!;
    expect(q.taskId).toBe("task-2");
    // the reranker's document is deleted in the next snapshot; the user answers the other question
    llm.reset();
    const next = { generation: "10", documents: ws.documents.filter((d) => d.identity !== chosen.resolvedIdentity) };
    const r2 = await replyTo(server.url, conv, q, "Договор", next, { interactionId: q.interactionId, debug: true });
    const q2 = one(r2, "clarification_required")!;
    expect(q2).toMatchObject({ taskId: "task-1", reasons: expect.arrayContaining(["selection_disappeared"]) });
    expect(q2.question).toContain(chosen.resolvedIdentity);
    expect(q2.candidates.map((c: Json) => c.identity)).not.toContain(chosen.resolvedIdentity);
    expect(llm.count("reranker")).toBe(0);
  });
});

describe("issue 14 (Workbench): the classifier fails on an obvious new request", () => {
  it("the new request supersedes the old Interaction instead of being folded into it", async () => {
    const conv = await newConversation(server.url);
    const { q } = await askWhichDiscount(llm, server.url, conv, { workspace: ws, debug: true });
    llm.reset();
    llm.script("classifier", "not json at all");
    llm.script("answer", "[[report-sales-book]].");
    const r2 = await replyTo(server.url, conv, q, "Покажи отчёт «Книга продаж»", ws, {
      interactionId: q.interactionId,
      debug: true,
    });
    expect(llm.count("classifier")).toBe(1);
    expect(stage(r2, "07")!.data.reply).toMatchObject({
      kind: "new_request",
      decidedBy: "classifier_fallback+new_request",
    });
    const started = one(r2, "run_started")!;
    expect(started.interactionId).not.toBe(q.interactionId);
    expect(one(r2, "final")).toMatchObject({ status: "completed" });
    expect(targetsOf(r2)).toEqual(["report-sales-book"]);
    const old = (await (await fetch(`${server.url}/v1/workbench/interactions/${q.interactionId}`)).json()) as Json;
    expect(old.status).toBe("superseded");
  });
});
