import { describe, expect, it } from "vitest";
import { resolveMention } from "../../../systems/workbench/resolve";
import { buildIndex, folderSubtree, getIndex, indexCacheStats } from "../../../systems/workbench/resolve-index";
import { snapshotSha256 } from "../../../systems/workbench/canonical";
import { sha, workspace } from "./fixtures";

const idx = buildIndex(workspace, sha);
/** A workspace document at the root with no content: only its type, identity and name matter here. */
const doc = (documentType: string, identity: string, displayName: string) => ({
  documentType,
  identity,
  displayName,
  folderIdentity: null,
  content: {},
});
const r = (mention: string, entityType?: string) =>
  resolveMention(idx, { mention, ...(entityType ? { entityType } : {}) });

describe("domain resolver (stage 06): signals in falling reliability", () => {
  it("documentType + identity is the strongest signal", () => {
    const x = r("composition-alpha", "Composition");
    expect(x).toMatchObject({ status: "resolved", resolvedIdentity: "composition-alpha", resolvedBy: "exact" });
    expect(x.candidates[0]!.signals).toContain("document_type+identity");
    expect(x.candidates[0]!.score).toBe(1);
  });

  it("exact normalized displayName (case, ё, spaces) beats a longer name that contains it", () => {
    const x = r("  объект   альфа ");
    expect(x).toMatchObject({ status: "resolved", resolvedIdentity: "composition-alpha" });
    expect(x.candidates.map((c) => c.identity)).toEqual(["composition-alpha", "composition-alpha-2"]);
    expect(r("Учет остатков")).toMatchObject({ status: "resolved", resolvedIdentity: "composition-stock" });
  });

  it("the same name in two types stays ambiguous without a type, resolves with one", () => {
    expect(r("Заказ клиента")).toMatchObject({ status: "ambiguous" });
    expect(
      r("Заказ клиента")
        .candidates.map((c) => c.documentType)
        .sort(),
    ).toEqual(["Entity", "Form"]);
    expect(r("Заказ клиента", "Form")).toMatchObject({ status: "resolved", resolvedIdentity: "form-order" });
  });

  it("a partial token match of two names is ambiguous", () => {
    expect(r("Альфа")).toMatchObject({ status: "ambiguous" });
  });

  it("an exact identity always wins over a name that reads the same (0 ambiguity)", () => {
    const ws = {
      generation: "1",
      documents: [
        doc("Composition", "cash-pooling", "Пулинг денежных средств"),
        doc("Report", "report-cp", "Cash pooling"),
      ],
    };
    const i2 = buildIndex(ws, snapshotSha256(ws));
    expect(resolveMention(i2, { mention: "cash-pooling" })).toMatchObject({
      status: "resolved",
      resolvedIdentity: "cash-pooling",
      resolvedBy: "exact",
    });
    expect(resolveMention(i2, { mention: "CASH-POOLING", entityType: "Composition" })).toMatchObject({
      status: "resolved",
      resolvedIdentity: "cash-pooling",
    });
    // typed as a name (spaces), it is the Report's exact name, not the identity
    expect(resolveMention(i2, { mention: "Cash pooling" })).toMatchObject({ status: "ambiguous" });
    expect(resolveMention(i2, { mention: "Cash pooling", entityType: "Report" })).toMatchObject({
      status: "resolved",
      resolvedIdentity: "report-cp",
    });
  });

  it("transliteration works both ways: Cyrillic typed for a Latin name and Latin for a Cyrillic one", () => {
    const ws = {
      generation: "1",
      documents: [
        doc("Entity", "entity-swift", "SWIFT"),
        doc("Report", "report-cashflow", "Cash Flow"),
        doc("Composition", "composition-smeta", "Смета"),
      ],
    };
    const i2 = buildIndex(ws, snapshotSha256(ws));
    expect(resolveMention(i2, { mention: "Свифт" })).toMatchObject({
      status: "resolved",
      resolvedIdentity: "entity-swift",
    });
    expect(resolveMention(i2, { mention: "Свифт" }).candidates[0]!.signals).toContain("transliteration");
    expect(resolveMention(i2, { mention: "Smeta" })).toMatchObject({
      status: "resolved",
      resolvedIdentity: "composition-smeta",
    });
  });

  it("unsupported types and unknown names", () => {
    expect(r("Закрытие месяца", "Process").status).toBe("unsupported_type");
    expect(r("Закрытие месяца").status).toBe("unsupported_type");
    expect(r("Прогноз спроса", "Composition")).toMatchObject({ status: "not_found", candidates: [] });
  });

  it("a name that exists only as another type: not found, and that document is offered", () => {
    const x = r("Учёт остатков", "Report");
    expect(x.status).toBe("not_found");
    expect(x.candidates[0]).toMatchObject({ identity: "composition-stock", documentType: "Composition" });
    expect(x.candidates[0]!.signals).toContain("other_type");
  });

  it("a mention only in content is a weak suggestion, never a resolution", () => {
    const x = r("по складам");
    expect(x.status).toBe("not_found");
    expect(x.candidates[0]).toMatchObject({ identity: "composition-stock", signals: ["content_mention"] });
  });
});

describe("beyond v0.6.0: weaker, named signals", () => {
  it("Russian declension (stem)", () => {
    const x = r("Учёта остатков", "Composition");
    expect(x).toMatchObject({ status: "resolved", resolvedIdentity: "composition-stock", resolvedBy: "signal" });
    expect(x.candidates[0]!.signals).toContain("stem");
    expect(x.candidates[0]!.score).toBeLessThan(0.95);
  });
  it("Latin↔Cyrillic transliteration", () => {
    const x = r("Obekt Alfa", "Composition");
    expect(x).toMatchObject({ status: "resolved", resolvedIdentity: "composition-alpha" });
    expect(x.candidates[0]!.signals).toEqual(["transliteration"]);
    expect(r("Soglasovanie zakaza")).toMatchObject({ status: "resolved", resolvedIdentity: "composition-approval" });
  });
  it("typo tolerance (edit distance)", () => {
    const x = r("Сагласование заказа");
    expect(x).toMatchObject({ status: "resolved", resolvedIdentity: "composition-approval" });
    expect(x.candidates[0]!.signals).toContain("typo");
  });

  // Two close names must stay ambiguous: no weaker signal turns an ambiguity into a guess.
  it("declension shared by two names stays ambiguous", () => {
    const x = r("Расчёта скидки");
    expect(x.status).toBe("ambiguous");
    expect(x.candidates.map((c) => c.identity)).toEqual(
      expect.arrayContaining(["composition-discount", "composition-discount-v1"]),
    );
  });
  it("a typo equally close to two names stays ambiguous", () => {
    // "Халина" is one letter from both "Калина" and "Малина"
    const x = r("Халина");
    expect(x.status).toBe("ambiguous");
    expect(x.candidates.map((c) => c.identity).sort()).toEqual(["composition-kalina", "composition-malina"]);
  });
  it("a transliteration matching two same-named documents stays ambiguous", () => {
    expect(r("Raschet skidki").status).toBe("ambiguous");
  });
  it("an exact name is not overruled by a declension variant of another name", () => {
    expect(r("Расчёт скидок")).toMatchObject({ status: "resolved", resolvedIdentity: "composition-discounts" });
  });
});

describe("folder scope and the index cache", () => {
  it("restricts candidates to a folder subtree, nested folders included", () => {
    const scope = folderSubtree(idx, "folder-sales");
    expect([...scope].map((i) => idx.docs[i]!.doc.identity)).toContain("composition-nested");
    const x = resolveMention(idx, { mention: "Расчёт скидки", scope: folderSubtree(idx, "folder-archive") });
    expect(x).toMatchObject({ status: "resolved", resolvedIdentity: "composition-discount-v1" });
  });

  it("caches the index by snapshotSha256: a repeated snapshot does not rebuild", () => {
    const other = { ...workspace, generation: "cache-test" };
    const s = snapshotSha256(other);
    const before = indexCacheStats().builds;
    const a = getIndex(other, s);
    const b = getIndex(other, s);
    expect(a.cached).toBe(false);
    expect(b.cached).toBe(true);
    expect(b.index).toBe(a.index);
    expect(indexCacheStats().builds).toBe(before + 1);
  });
});
