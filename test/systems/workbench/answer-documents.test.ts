// Display names the answer gives documents (issue 42): a name after a document noun, quoted or in
// Title Case, must be a document of the workspace or a name the context spells.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { inventedDocuments, nameLookup } from "../../../systems/workbench/answer-documents";
import type { ModelRequest } from "../../../systems/workbench/model-request";
import { getIndex, hasDocumentNamed } from "../../../systems/workbench/resolve-index";
import type { WorkspaceSnapshot } from "../../../systems/workbench/types";

const ws = JSON.parse(
  readFileSync(new URL("../../../systems/workbench/samples/workspace.json", import.meta.url), "utf8"),
) as WorkspaceSnapshot;
const { index } = getIndex(ws, "answer-documents-test");
const req = {
  request: "Покажи форму «Учёт клиентов»",
  plan: { planVersion: 1, tasks: [] },
  conversation: [],
  workspace: { generation: "1", snapshotSha256: "answer-documents-test" },
  context: [],
} as ModelRequest;
const known = nameLookup(req, (n) => hasDocumentNamed(index, n));
const invented = (t: string) => inventedDocuments(t, known);

describe("invented documents by display name", () => {
  it("a workspace document's name, inflected or in Title Case, is known", () => {
    for (const t of [
      "Форма «Отгрузка» связана с сущностью «Отгрузка».",
      "В отчёте «Доставки за месяц» используется композиция «Стоимость доставки».",
      "Откройте отчёт Неоплаченные Счета.",
      "Композиции в «Логистике» перечислены ниже.",
    ])
      expect(invented(t), t).toEqual([]);
  });
  it("a name the context spells is known (the user's own request naming what does not exist)", () => {
    expect(invented("Форма «Учёт клиентов» не найдена.")).toEqual([]);
  });
  it("a name after a document noun that nothing bears is invented, in a list too", () => {
    expect(invented("См. отчёт «Доставки за неделю».")).toEqual(["Доставки за неделю"]);
    expect(invented("Есть композиции «Проект Бета» и «Проект Дельта».")).toEqual(["Проект Дельта"]);
    expect(invented("Откройте отчёт Просроченные Платежи.")).toEqual(["Просроченные Платежи"]);
    expect(invented("The report «Sales Summary» lists them.")).toEqual(["Sales Summary"]);
  });
  it("a title after any noun is a name too: a section, a reference book, a wizard nothing bears", () => {
    expect(invented("Подробнее — в разделе «Зависимости отчётов и композиций».")).toEqual([
      "Зависимости отчётов и композиций",
    ]);
    expect(invented("Тарифы хранятся в справочнике Тарифная Сетка Перевозчиков.")).toEqual([
      "Тарифная Сетка Перевозчиков",
    ]);
    // a proper noun after a noun is one word, not a title; a known name with a long invented tail is not known
    expect(invented("Так устроена документация Endge.")).toEqual([]);
    expect(invented("Результат уходит в отчёт Доставки Отпусков По Отделам.")).toEqual([
      "Доставки Отпусков По Отделам",
    ]);
  });
  it("quotes that name no document are not judged («Сохранить» is a button)", () => {
    expect(invented("Нажмите кнопку «Сохранить».")).toEqual([]);
  });
});
