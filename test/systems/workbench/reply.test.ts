import { describe, expect, it } from "vitest";
import {
  classifyReplyByCode,
  currentOrArchived,
  descriptiveChoice,
  obviousNewRequest,
  ordinalIndex,
  parseClassifierOutput,
} from "../../../systems/workbench/reply";
import type { Candidate } from "../../../systems/workbench/types";

const candidates: Candidate[] = [
  {
    candidateId: "c1",
    identity: "composition-discount",
    displayName: "Расчёт скидки",
    documentType: "Composition",
    folderIdentity: "folder-sales",
    folderName: "Продажи",
  },
  {
    candidateId: "c2",
    identity: "composition-discount-v1",
    displayName: "Расчёт скидки",
    documentType: "Composition",
    folderIdentity: "folder-archive",
    folderName: "Архив",
  },
];
const mixed: Candidate[] = [
  {
    candidateId: "c1",
    identity: "entity-order",
    displayName: "Заказ клиента",
    documentType: "Entity",
    folderName: "Продажи",
  },
  {
    candidateId: "c2",
    identity: "form-order",
    displayName: "Заказ клиента",
    documentType: "Form",
    folderName: "Продажи",
  },
];

describe("ordinal resolver", () => {
  it.each([
    ["Первую", 0],
    ["вторую", 1],
    ["второй вариант", 1],
    ["давай 2", 1],
    ["последний", 1],
    ["последний вариант", 1],
    ["номер 1", 0],
  ])("%s → #%i", (text, i) => {
    expect(ordinalIndex(text, 2)).toBe(i);
  });
  it("refuses an ordinal outside the list and long sentences", () => {
    expect(ordinalIndex("третью", 2)).toBeNull();
    expect(ordinalIndex("первую композицию из тех что были в прошлом месяце", 2)).toBeNull();
  });
});

describe("descriptive resolver", () => {
  it("by folder, in any case form", () => {
    expect(descriptiveChoice("ту, что в папке Архив", candidates)).toBe("c2");
    expect(descriptiveChoice("Из архива", candidates)).toBe("c2");
    expect(descriptiveChoice("архивную", candidates)).toBe("c2");
    expect(descriptiveChoice("которая в продажах", candidates)).toBe("c1");
  });
  it("by type, with 'не X' excluding a type", () => {
    expect(descriptiveChoice("форму, не сущность", mixed)).toBe("c2");
    expect(descriptiveChoice("не форму", mixed)).toBe("c1");
    expect(descriptiveChoice("сущность", mixed)).toBe("c1");
  });
  it("nothing when the description fits both or none", () => {
    expect(descriptiveChoice("Расчёт скидки", candidates)).toBeNull();
    expect(descriptiveChoice("зелёную", candidates)).toBeNull();
  });
});

describe("current or archived (after the classifier said 'answer')", () => {
  it("picks the non-archived candidate for 'актуальную' and the archived one for 'старую'", () => {
    expect(currentOrArchived("актуальную, которая сейчас работает", candidates)).toBe("c1");
    expect(currentOrArchived("старую версию", candidates)).toBe("c2");
    expect(currentOrArchived("какую-нибудь", candidates)).toBeNull();
    expect(currentOrArchived("актуальную", mixed)).toBeNull();
  });
});

describe("reply classification by code", () => {
  it("a click is an answer, validated against the list", () => {
    expect(classifyReplyByCode("эту", candidates, "c2")).toEqual({ kind: "answer", candidateId: "c2", by: "click" });
    expect(classifyReplyByCode("эту", candidates, "composition-alpha").kind).toBe("free_text");
  });
  it("explicit cancel", () => {
    expect(classifyReplyByCode("Отмена", candidates).kind).toBe("cancel");
    expect(classifyReplyByCode("отмени запрос", candidates).kind).toBe("cancel");
  });
  it("ordinal and descriptive replies are decided by code", () => {
    expect(classifyReplyByCode("вторую", candidates)).toMatchObject({
      kind: "answer",
      candidateId: "c2",
      by: "ordinal",
    });
    expect(classifyReplyByCode("из архива", candidates)).toMatchObject({
      kind: "answer",
      candidateId: "c2",
      by: "descriptive",
    });
  });
  it("a new command is free text for the classifier, even if a word matches a candidate's folder", () => {
    expect(classifyReplyByCode("Найди отчёт «Продажи за квартал»", candidates)).toEqual({
      kind: "free_text",
      hasCommand: true,
    });
  });
  it("classifier output is validated", () => {
    expect(parseClassifierOutput('{"kind": "new_request"}')).toBe("new_request");
    expect(parseClassifierOutput('{"kind": "maybe"}')).toBeNull();
    expect(parseClassifierOutput("{}")).toBeNull();
  });
});

describe("obviousNewRequest (no classifier verdict)", () => {
  const cands = [
    { candidateId: "c1", identity: "composition-discount", displayName: "Расчёт скидки", documentType: "Composition" },
    {
      candidateId: "c2",
      identity: "composition-discount-v1",
      displayName: "Расчёт скидки",
      documentType: "Composition",
      folderName: "Архив",
    },
  ];
  it("a command with its own quoted target, identity or typed list is a new request", () => {
    expect(obviousNewRequest("Покажи отчёт «Книга продаж»", cands)).toBe(true);
    expect(obviousNewRequest("Найди entity-contract", cands)).toBe(true);
    expect(obviousNewRequest("Перечисли все формы", cands)).toBe(true);
  });
  it("an answer about the offered candidates, or free text, is not", () => {
    expect(obviousNewRequest("Покажи «Расчёт скидки»", cands)).toBe(false);
    expect(obviousNewRequest("покажи ту, что в архиве", cands)).toBe(false);
    expect(obviousNewRequest("ну тот, что для экрана, наверное", cands)).toBe(false);
    expect(obviousNewRequest("composition-discount", cands)).toBe(false);
  });
});
