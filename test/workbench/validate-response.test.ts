import { describe, expect, it } from "vitest";
import { extractCitations, validateResponse } from "../../workbench/validate-response";

const exists = (id: string) => ["composition-alpha", "composition-beta", "folder-sales"].includes(id);
const passed = new Set(["composition-alpha", "folder-sales"]);
const v = (answer: string) => validateResponse(answer, { exists, passed });

describe("response validation (stage 12)", () => {
  it("accepts citations that exist and were passed to the model", () => {
    expect(v("Композиция [[composition-alpha]] лежит в [[folder-sales]].")).toEqual({ ok: true, issues: [], citations: ["composition-alpha", "folder-sales"] });
  });
  it("flags an unknown identity and one that exists but was not passed", () => {
    expect(v("Похоже на [[composition-omega]].").issues).toEqual([{ code: "unknown_identity", detail: "composition-omega" }]);
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
});
