// Figures bound to the context (issue 42): units normalised, numbers in words, dates in any
// spelling, the noun a figure counts, derived figures only where the context states the operation.
import { describe, expect, it } from "vitest";
import { contextNumbers, unsupportedFigures } from "../../../systems/workbench/answer-numbers";
import { figuresIn } from "../../../systems/workbench/figures";
import type { ModelRequest } from "../../../systems/workbench/model-request";

const req = (content: Record<string, unknown>, request = "Покажи композицию"): ModelRequest => ({
  request,
  plan: { planVersion: 1, tasks: [] },
  conversation: [],
  workspace: { generation: "1", snapshotSha256: "x" },
  context: [
    {
      kind: "entity",
      taskId: "t",
      identity: "composition-x",
      documentType: "Composition",
      displayName: "Тест",
      folder: null,
      truncated: false,
      content,
    } as never,
  ],
});
const ctx = contextNumbers(
  req({
    description:
      "Срок хранения — 90 дней. Отчёт строится за 2 часа. Скидка 15 %. Запуск 1 апреля 2025 года. Этапы: сбор, проверка и публикация. Пример: 3 позиции по 200 руб. — итого 600 руб.",
    retries: 3,
    timeoutMinutes: 45,
  }),
);
const ok = (t: string) => unsupportedFigures(t, ctx).length === 0;
/** Each text is (`expected` true) or is not (false) borne out by the context; a failure names the text. */
const expectOk = (expected: boolean, texts: string[]) => {
  for (const t of texts) expect(ok(t), t).toBe(expected);
};

describe("figures in text", () => {
  it("reads units, words, dates and the counted noun", () => {
    expect(figuresIn("2 недели")[0]).toMatchObject({ value: 2, measure: { dim: "time", base: 20160 } });
    expect(figuresIn("двадцать три формы")[0]).toMatchObject({ value: 23, noun: "форма" });
    expect(figuresIn("14 марта 2025 года")[0]).toMatchObject({ date: { d: 14, m: 3, y: 2025 } });
    expect(figuresIn("10 рабочих дней")[0]!.measure!.dim).toBe("workdays");
    expect(figuresIn("полгода")[0]).toMatchObject({ value: 0.5, measure: { dim: "months", base: 6 } });
    expect(figuresIn("1. Первый\n2. Второй")).toEqual([]);
  });
});

describe("figures bound to the context", () => {
  it("a figure restated in other units or in words is the context's", () => {
    expectOk(true, [
      "Срок хранения — 90 суток.",
      "Отчёт строится за 120 минут.",
      "Отчёт строится за два часа.",
      "Скидка 15 процентов.",
      "Таймаут — 45 минут.",
    ]);
  });
  it("a date in words, dots or as its year is the context's; another date is not", () => {
    expectOk(true, ["Запуск — в апреле 2025 года.", "Запуск 01.04.2025.", "Запуск 1 апреля."]);
    expectOk(false, ["Запуск 2 апреля.", "Запуск в 2024 году."]);
  });
  it("a figure about another noun or unit is a lie", () => {
    expectOk(false, [
      "Хранение 12 недель.",
      "Таймаут — 45 секунд.",
      "90 отчётов.",
      "Срок хранения — около трёх месяцев.",
      "Скидка 20 %.",
    ]);
  });
  it("counts what the context enumerates; carries out the arithmetic its example states, nothing else", () => {
    expect(ok("Три этапа: сбор, проверка и публикация.")).toBe(true);
    expect(ok("Четыре этапа.")).toBe(false);
    expect(ok("3 позиции по 200 руб. дают 600 руб.")).toBe(true);
    expect(ok("Итого 800 руб.")).toBe(false);
  });
  it("a noun the context counts binds the figure to those counts", () => {
    const c = contextNumbers(req({ description: "Ассистент задаёт один уточняющий вопрос: если A, B или C." }));
    expect(unsupportedFigures("Это три случая.", c)).toEqual([]);
    expect(unsupportedFigures("Ассистент задаёт три уточняющих вопроса.", c).map((f) => f.value)).toEqual([3]);
  });
  it("an enumeration counts what its sentence speaks of; a noun the context uses elsewhere is not it", () => {
    const c = contextNumbers(
      req({
        description:
          "Выберите один из вариантов. Вопрос задаётся, если A, B или C. WORKDAYS(from, to) считает дни между датами.",
      }),
    );
    expect(unsupportedFigures("В трёх случаях задаётся вопрос.", c)).toEqual([]);
    expect(unsupportedFigures("Между двумя датами.", c)).toEqual([]);
    expect(unsupportedFigures("Можно выбрать до трёх вариантов.", c).map((f) => f.value)).toEqual([3]);
  });
  it("a content key counts what its document speaks of", () => {
    const c = contextNumbers(req({ description: "Пример: 4 точки по 25 км.", maxPoints: 40 }));
    expect(unsupportedFigures("Не больше 40 точек.", c)).toEqual([]);
    expect(unsupportedFigures("До 40 транспортных средств.", c).map((f) => f.value)).toEqual([40]);
  });
  it("a unit-less content key counts the noun it means (the key's word or its gloss), never another", () => {
    const c = contextNumbers(
      req({ description: "Шаг, завершившийся ошибкой, запускается повторно.", retries: 3, maxParallelTasks: 2 }),
    );
    for (const t of [
      "До 3 попыток.",
      "Три повтора.",
      "Повторяется до 3 раз.",
      "Up to 3 retries.",
      "Не больше двух задач.",
      "Повторные попытки: 3.",
    ])
      expect(unsupportedFigures(t, c), t).toEqual([]);
    for (const t of ["Участвуют 3 пользователя.", "До 3 задач.", "До 2 раз.", "В течение 3 дней.", "До 4 попыток."])
      expect(unsupportedFigures(t, c).length, t).toBeGreaterThan(0);
  });
  it("a key's gloss written out in a passed passage counts too, though its document never says it", () => {
    const r = req({ description: "Совет утверждает решения.", quorum: 5 });
    const c = contextNumbers({
      ...r,
      context: [
        ...r.context,
        {
          kind: "doc",
          docId: "council",
          heading: "Параметры совета",
          text: "Параметр quorum — минимальное число голосов для решения.",
          tokens: 10,
        } as never,
      ],
    });
    expect(unsupportedFigures("Нужно 5 голосов.", c)).toEqual([]);
    expect(unsupportedFigures("Нужно 5 участников.", c).map((f) => f.value)).toEqual([5]);
  });
  it("a unit with no number is one of it; a calendar gloss stands only beside the exact figure", () => {
    expect(figuresIn("после года работы")[0]).toMatchObject({ value: 1, measure: { dim: "months", base: 12 } });
    expect(figuresIn("раз в сутки")[0]).toMatchObject({ value: 1, measure: { dim: "time", base: 1440 } });
    expect(figuresIn("28 дней в год")).toHaveLength(1);
    expect(ok("Хранение — после года.")).toBe(false);
    expect(ok("Срок хранения — 90 дней, то есть около трёх месяцев.")).toBe(true);
    expect(ok("Поля: полей пять.")).toBe(false);
    expect(figuresIn("В сущности 6 полей.")[0]).toMatchObject({ value: 6, noun: "поле" });
    expect(figuresIn("Операторов четыре.")[0]).toMatchObject({ value: 4, noun: "оператор" });
  });
});
