import { describe, expect, it } from "vitest";
import { extractCitations, findClaimedChange, validateResponse } from "../../../systems/workbench/validate-response";

const exists = (id: string) => ["composition-alpha", "composition-beta", "folder-sales"].includes(id);
const passed = new Set(["composition-alpha", "folder-sales"]);
const v = (answer: string) => validateResponse(answer, { exists, passed });

describe("response validation (stage 12)", () => {
  it("accepts citations that exist and were passed to the model", () => {
    expect(v("Композиция [[composition-alpha]] лежит в [[folder-sales]].")).toEqual({
      ok: true,
      issues: [],
      citations: ["composition-alpha", "folder-sales"],
    });
  });
  it("flags an unknown identity and one that exists but was not passed", () => {
    expect(v("Похоже на [[composition-omega]].").issues).toEqual([
      { code: "unknown_identity", detail: "composition-omega" },
    ]);
    expect(v("См. [[composition-beta]].").issues).toEqual([{ code: "not_in_context", detail: "composition-beta" }]);
  });
  it("checks the format: empty answer, broken citation, raw JSON", () => {
    expect(v("  ").issues.map((i) => i.code)).toEqual(["empty_answer"]);
    expect(v("См. [[composition-alpha").issues.map((i) => i.code)).toEqual(["malformed_citation"]);
    expect(v('{"answer": 1}').issues.map((i) => i.code)).toEqual(["raw_json"]);
  });
  it("flags claims of changes the Workbench never made, not descriptions of history", () => {
    expect(v("Я переименовал композицию [[composition-alpha]].").issues.map((i) => i.code)).toEqual(["claimed_change"]);
    expect(v("Готово, изменения внесены.").issues.map((i) => i.code)).toEqual(["claimed_change"]);
    expect(v("Архивная версия [[composition-alpha]] заменена в 2025 году.").ok).toBe(true);
    expect(v("Документ можно удалить в дереве Конфигуратора.").ok).toBe(true);
  });
  it("collects each citation once", () => {
    expect(extractCitations("[[a-b]] и снова [[a-b]], и [[c-d]]")).toEqual(["a-b", "c-d"]);
  });
  it("flags a claimed edit in any verb form or tense (a rule over stems, not phrases)", () => {
    const claims = [
      "Готово: я поменял формулу в [[composition-alpha]].",
      "Формула в композиции обновлена.",
      "Композиция [[composition-alpha]] удалена по вашей просьбе.",
      "Внёс изменения в [[composition-alpha]].",
      "I've updated the formula.",
      "I have deleted the composition.",
      "The field has been renamed.",
      "Changes were saved.",
      "Удалила композицию «Бюджет».",
      "Мы обновили отчёт, теперь он считает итоги.",
      "Поле «Сумма» переименовано в «Итого».",
      "Значения изменены.",
      "Изменения внесены в формулу.",
      "Я исправила ошибку в формуле.",
      "Отредактировал описание формы.",
      "Новая форма создана для вас.",
      "Поле успешно добавлено в сущность.",
      "Документ перемещён в папку «Архив», как вы просили.",
      "Уже сохранила правки.",
    ];
    for (const c of claims)
      expect(
        v(c).issues.map((i) => i.code),
        c,
      ).toContain("claimed_change");
  });
  it("does not take descriptions, advice or history for a claim", () => {
    const plain = [
      "Композиция [[composition-alpha]] создана для расчёта бюджета.",
      "В форме добавлены поля «Сумма» и «Дата».",
      "Чтобы изменить формулу, откройте композицию в Конфигураторе.",
      "Удалить документ можно в дереве Конфигуратора.",
      "Удалённые композиции попадают в корзину.",
      "Формула была изменена в 2024 году.",
      "Отчёт создан ранее на основе композиции.",
      "Я нашёл композицию, которую создал Иван.",
      "Измените формулу в редакторе и сохраните документ.",
      "You can update the formula in the editor.",
      "Обновление формулы выполняется вручную.",
    ];
    for (const p of plain) expect(findClaimedChange(p), p).toBeUndefined();
  });
  it("checks bare identities too: one not given to the model, or an invented one of the same shape", () => {
    expect(v("См. composition-beta.").issues).toEqual([{ code: "not_in_context", detail: "composition-beta" }]);
    expect(v("Похоже на composition-omega").issues).toEqual([
      { code: "unknown_identity", detail: "composition-omega" },
    ]);
    expect(v("Композиция composition-alpha лежит в folder-sales.").ok).toBe(true);
    expect(v("Уведомления уходят по e-mail и в cash-flow отчёт.").ok).toBe(true);
  });
});

describe("identities named inside a passed document's content", () => {
  const opts = {
    exists: (id: string) => ["form-shipment", "entity-shipment", "entity-carrier"].includes(id),
    passed: new Set(["form-shipment"]),
    referenced: new Set(["entity-shipment"]),
  };
  it("may be named and cited as [[identity]] (issue 42: the prompt asks for it), unlike one never shown", () => {
    expect(validateResponse("Форма [[form-shipment]] связана с `entity-shipment`.", opts).ok).toBe(true);
    expect(validateResponse("Форма связана с [[entity-shipment]].", opts).issues).toEqual([]);
    expect(validateResponse("Форма связана с [[entity-carrier]].", opts).issues).toEqual([
      { code: "not_in_context", detail: "entity-carrier" },
    ]);
    // one the context never showed stays outside it
    expect(validateResponse("Форма связана с entity-carrier.", opts).issues).toEqual([
      { code: "not_in_context", detail: "entity-carrier" },
    ]);
  });
});
