import { describe, expect, it } from "vitest";
import { normalize } from "../../../systems/workbench/normalize";

describe("normalize (stage 02)", () => {
  it("gives one canonical form with unified quotes and a folded matching key", () => {
    const n = normalize("  Найди   КОМПОЗИЦИЮ  «Учёт остатков» ");
    expect(n.canonical).toBe('Найди КОМПОЗИЦИЮ "Учёт остатков"');
    expect(n.folded).toBe("найди композицию «учет остатков»");
    expect(n.quoted).toEqual(["Учёт остатков"]);
  });

  it.each([
    ["Найдите договор", "find"],
    ["поищи отчёт", "find"],
    ["Покажите форму", "inspect"],
    ["Открой композицию", "inspect"],
    ["Выведи список композиций", "list"],
    ["Перечислите папки", "list"],
    ["Объясните синтаксис", "explain"],
    ["Удали композицию", "mutate"],
  ])("recognises the command in %s", (text, kind) => {
    expect(normalize(text).commands[0]?.kind).toBe(kind);
  });

  it("does not read words inside a quoted name as commands", () => {
    expect(normalize("«Покажи мне»").commands).toEqual([]);
  });

  it("marks history references: pronouns, demonstratives with a type, 'previous'", () => {
    expect(normalize("А в какой папке она лежит?").historyRefs.map((r) => [r.text, r.gender])).toEqual([["она", "f"]]);
    expect(normalize("Покажи её").historyRefs[0]?.text).toBe("ее");
    expect(normalize("Объясни эту композицию").historyRefs[0]).toMatchObject({
      kind: "demonstrative",
      entityType: "Composition",
    });
    expect(normalize("покажи предыдущую").historyRefs[0]?.kind).toBe("previous");
    expect(normalize("что это такое").historyRefs).toEqual([]);
  });

  it("extracts identity-like tokens and UUIDs", () => {
    const n = normalize("Покажи composition-order-approval и 0F8FAD5B-D9CB-469F-A165-70867728950E");
    expect(n.identities).toEqual(["composition-order-approval", "0f8fad5b-d9cb-469f-a165-70867728950e"]);
    expect(n.uuids).toHaveLength(1);
  });
});
