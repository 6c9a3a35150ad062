// The fact-free check of the answer model's opening and closing, by the grammar of the line: courtesy
// by dictionary form, the user's own words only where nothing is said of them, operators never, a
// failure only when a tool failed.
import { describe, expect, it } from "vitest";
import { factFreeIssues } from "../../../systems/evidence/free-text";

const Q = ["Сколько мы должны ООО «Альфа-Снаб» на 31.03.2026?", "Дата отсечения: 31.03.2026", "Контрагент: Альфа-Снаб"];

describe("an opening or closing is shown only when its grammar says no fact", () => {
  it("passes courtesy in any inflection, a heading, a block's title", () => {
    for (const ok of [
      "Здравствуйте! Вот что показала проверка по данным учёта.",
      "Надеюсь, это поможет.",
      "Если понадобится уточнить детали, пишите.",
      "### Результаты проверки",
      "**Ответ на ваш вопрос**",
      "Обратите внимание на блок «Что не удалось установить».",
    ])
      expect(factFreeIssues(ok), ok).toEqual([]);
  });

  it("passes the user's own words, date and party where nothing is said of them", () => {
    for (const ok of [
      "Вот ответ по ООО «Альфа-Снаб» на 31.03.2026.",
      "Если будут ещё вопросы по расчётам, обращайтесь.",
      "Нужно уточнить дату.",
      "Если нужна другая дата, пишите.",
    ])
      expect(factFreeIssues(ok, Q), ok).toEqual([]);
  });

  it("refuses the user's words turned into a claim, another date or party, operators and inline markup", () => {
    for (const lie of [
      "Мы должны ООО «Альфа-Снаб» на 31.03.2026.", // a short form from the question is a claim
      "Проверка показала долг по ООО «Альфа-Снаб».", // what the predicate says something about
      "Долг по ООО «Альфа-Снаб» на 31.03.2026 — погашен.",
      "Вот ответ по ООО «Вектор» на 31.03.2026.", // not the user's party this turn
      "Вот ответ на 10.04.2026.", // not the user's date this turn
      "Долг перед поставщиками — ноль.",
      "Долг либо есть, либо нет.",
      "Ниже ~~не~~ все документы.",
      "Итого 95 000 ₽.",
    ])
      expect(factFreeIssues(lie, Q), lie).not.toEqual([]);
  });

  it("says what was not done only when a tool of the run failed", () => {
    const line = "К сожалению, получить данные не удалось.";
    expect(factFreeIssues(line, [], true)).toEqual([]);
    expect(factFreeIssues(line, [], false).join()).toMatch(/«не»/);
    // the exception is the negated verb of doing, nothing more
    expect(factFreeIssues("Проверка не завершена, но долгов нет.", [], true)).not.toEqual([]);
    expect(factFreeIssues("Данные получены, проверка завершена.", [], true)).not.toEqual([]);
  });
});
