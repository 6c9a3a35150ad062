import { describe, expect, it } from "vitest";
import { collapseSpaces, extractQuoted, fold, IDENTITY_RE, tokenize, UUID_RE } from "../../../systems/workbench/text";

describe("fold", () => {
  it("folds case, ё/е, whitespace and Unicode compatibility forms", () => {
    expect(fold("  Учёт\u00a0 ОСТАТКОВ\t")).toBe("учет остатков");
    // NFKC: fullwidth Latin and a composed й written as и + combining breve
    expect(fold("ＡＢＣ")).toBe("abc");
    expect(fold("Объект Альфа".replace("й", "и\u0306"))).toBe(fold("Объект Альфа"));
    expect(fold("Ёлка")).toBe("елка");
  });
  it("collapses runs of spaces", () => {
    expect(collapseSpaces(" a \n\n b ")).toBe("a b");
  });
});

describe("extractQuoted", () => {
  it("reads «», „“, “” and straight quotes", () => {
    expect(extractQuoted('Найди «Расчёт скидки» и „Объект Альфа“, “Склад” и "Договор"').map((q) => q.text)).toEqual([
      "Расчёт скидки",
      "Объект Альфа",
      "Склад",
      "Договор",
    ]);
  });
  it("keeps nested quotes of another style inside the outer name", () => {
    expect(extractQuoted("Покажи отчёт «Итоги „Альфа“ за год»").map((q) => q.text)).toEqual(["Итоги „Альфа“ за год"]);
  });
  it("ignores empty and unbalanced quotes", () => {
    expect(extractQuoted("«» и «незакрытая")).toEqual([]);
  });
});

describe("identity-like tokens", () => {
  it("matches slugs with separators and UUIDs, not single words", () => {
    const text =
      "покажи composition-order-approval и entity_contract, не Alfa; id 0f8fad5b-d9cb-469f-a165-70867728950e";
    expect([...text.matchAll(IDENTITY_RE)].map((m) => m[0])).toContain("composition-order-approval");
    expect([...text.matchAll(IDENTITY_RE)].map((m) => m[0])).toContain("entity_contract");
    expect([...text.matchAll(IDENTITY_RE)].map((m) => m[0])).not.toContain("Alfa");
    expect([...text.matchAll(UUID_RE)].map((m) => m[0])).toEqual(["0f8fad5b-d9cb-469f-a165-70867728950e"]);
    expect(tokenize("folder-sales, отчёт")).toEqual(["folder-sales", "отчёт"]);
  });
});
