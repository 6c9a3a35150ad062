import { describe, expect, it } from "vitest";
import { stemWord } from "../../../systems/workbench/stem";
import { osaDistance, typoAllowance } from "../../../systems/workbench/distance";
import { skeleton, skeletonWord } from "../../../systems/workbench/translit";
import { fold, words } from "../../../systems/workbench/text";

describe("Russian stemmer (Snowball)", () => {
  it.each([
    ["остатков", "остатк"],
    ["остатки", "остатк"],
    ["учёта", "учет"],
    ["учет", "учет"],
    ["согласование", "согласован"],
    ["согласования", "согласован"],
    ["скидки", "скидк"],
    ["скидке", "скидк"],
    ["продажи", "продаж"],
    ["композиции", "композиц"],
    ["композицию", "композиц"],
    ["красивейший", "красив"],
    ["уточняющий", "уточня"],
    ["договора", "договор"],
    ["договоров", "договор"],
    // fleeting о/е: both forms meet
    ["остаток", "остатк"],
    ["остатка", "остатк"],
    ["скидок", "скидк"],
    ["конец", "конц"],
    ["конца", "конц"],
  ])("%s → %s", (w, s) => {
    expect(stemWord(w)).toBe(s);
  });
  it("leaves short and non-Cyrillic words alone", () => {
    expect(stemWord("и")).toBe("и");
    expect(stemWord("alfa")).toBe("alfa");
  });
});

describe("transliteration skeleton", () => {
  const sk = (s: string) => skeleton(words(fold(s)));
  it("meets Latin and Cyrillic spellings of one name", () => {
    expect(sk("Obekt Alfa")).toBe(sk("Объект Альфа"));
    expect(sk("Obyekt Alfa")).toBe(sk("Объект Альфа"));
    expect(sk("Schetchik")).toBe(sk("Счётчик"));
    expect(sk("Kontragent")).toBe(sk("Контрагент"));
    expect(sk("Shchit")).toBe(sk("Щит"));
    expect(sk("Raschet")).toBe(sk("Расчёт"));
    expect(sk("Inventarizatsiya")).toBe(sk("Инвентаризация"));
    expect(sk("Kontsert")).toBe(sk("Концерт"));
    expect(skeletonWord("zhurnal")).toBe(skeletonWord("журнал"));
  });
  it("keeps different names different", () => {
    expect(sk("Alfa")).not.toBe(sk("Бета"));
    expect(sk("Kalina")).not.toBe(sk("Малина"));
  });
});

describe("edit distance", () => {
  it("counts insertions, deletions, substitutions and adjacent transpositions", () => {
    expect(osaDistance("согласоване", "согласование")).toBe(1);
    expect(osaDistance("скидка", "скидак")).toBe(1);
    expect(osaDistance("калина", "малина")).toBe(1);
    expect(osaDistance("абв", "где")).toBe(3);
    expect(osaDistance("договор", "договор")).toBe(0);
  });
  it("gives up beyond the bound", () => {
    expect(osaDistance("абвгдеж", "жедгвба", 1)).toBe(2);
  });
  it("allows no typo in short words", () => {
    expect(typoAllowance(4)).toBe(0);
    expect(typoAllowance(6)).toBe(1);
    expect(typoAllowance(12)).toBe(2);
  });
});
