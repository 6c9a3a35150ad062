import { describe, expect, it } from "vitest";
import { normalize } from "../../../systems/workbench/normalize";
import { deterministicPlan } from "../../../systems/workbench/plan";
import { routeSources } from "../../../systems/workbench/route";

const route = (text: string) => routeSources(deterministicPlan(normalize(text)).plan);

describe("source routing (stage 04)", () => {
  it("domain never loads documentation", () => {
    expect(route("Покажи композицию «Расчёт скидки»")).toMatchObject({
      mode: "domain",
      loadDocumentation: false,
      resolveDomain: true,
    });
  });
  it("documentation never resolves entities", () => {
    expect(route("Объясни синтаксис выражений")).toMatchObject({
      mode: "documentation",
      loadDocumentation: true,
      resolveDomain: false,
    });
  });
  it("a document with the docs' rules is mixed; a history reference is conversation; a mutation is none", () => {
    expect(route("Объясни композицию «Расчёт скидки»")).toMatchObject({
      mode: "mixed",
      loadDocumentation: true,
      resolveDomain: true,
    });
    expect(route("А где она лежит?")).toMatchObject({
      mode: "conversation",
      useConversation: true,
      loadDocumentation: false,
    });
    expect(route("Удали отчёт «Продажи за квартал»")).toMatchObject({
      mode: "none",
      loadDocumentation: false,
      resolveDomain: false,
    });
  });
});
