// The pure rules behind items 4–6: what the user's words carry, which side they ask about, and
// the one place dates are validated.
import { describe, expect, it } from "vitest";
import { checkDatePhrase, findDateSurface } from "../../../systems/evidence/mcp-server/dates";
import { askedRole, carriedBy, userDateSurface } from "../../../systems/evidence/user-words";
import { findCounterpartySurface } from "../../../systems/evidence/interpret-rules";

const W = "2026-04-10";

describe("carriedBy: the user's words, by stem", () => {
  it.each([
    ["Альфа-Снаб", "а по Альфа-Снабу?", true],
    ["ООО «Альфа-Снаб»", "какое сальдо по альфа снабу", true],
    ["Ромашка", "Сколько мы должны Ромашке?", true],
    ["Вектор", "Какое сальдо на 31 марта?", false],
    ["ТехноПоставка", "а по Альфа-Снабу?", false],
    ["31.03.2026", "хвосты на 31.03.2026", true],
    ["31.03.2026", "хвосты на 30.03.2026", false],
    ["2026-04-10", "а какие документы не закрыты?", false],
    ["поставщик", "По каким поставщикам висят хвосты?", true],
    ["", "что угодно", false],
  ])("%s in «%s» → %s", (value, text, expected) => {
    expect(carriedBy(value, [text])).toBe(expected);
  });

  it("an answered clarification's question counts as the user's words", () => {
    expect(
      carriedBy("31.03.2026", ["любые незакрытые остатки", "По каким поставщикам висят хвосты на 31.03.2026?"]),
    ).toBe(true);
    expect(userDateSurface(["Альфа-Снаб", "сальдо на конец марта"])).toBe("конец марта");
    expect(userDateSurface(["Альфа-Снаб", null])).toBeNull();
  });
});

describe("askedRole", () => {
  it.each([
    ["Сколько мы должны Ромашке?", "supplier"],
    ["Какой у нас долг перед Вектором?", "supplier"],
    ["Сколько нам должна Ромашка?", "customer"],
    ["Какая дебиторка по Вектору?", "customer"],
    ["Какое сальдо по Альфа-Снабу?", null],
  ])("%s → %s", (text, role) => expect(askedRole(text)).toBe(role));
});

describe("checkDatePhrase: dates validated in one place", () => {
  it.each([
    ["на 31.02.2026", "impossible"],
    ["на 30 февраля", "impossible"],
    ["на 2026-13-01", "impossible"],
    ["на 29.02.2025", "impossible"],
    ["на 15.05.2026", "future"],
    ["на 1 мая", "future"],
    ["на 31.03.2026", "ok"],
    ["на вчера", "ok"],
    ["без даты", "none"],
  ])("%s → %s", (text, kind) => expect(checkDatePhrase(text, W).kind).toBe(kind));

  it("relative dates count from the working date and say so", () => {
    const c = checkDatePhrase("на вчера", W);
    expect(c).toMatchObject({ kind: "ok", parsed: { as_of_date: "2026-04-09", relative: true } });
    expect(checkDatePhrase("позавчера", W)).toMatchObject({
      kind: "ok",
      parsed: { as_of_date: "2026-04-08", relative: true },
    });
    const plain = checkDatePhrase("на 31.03.2026", W);
    expect(plain.kind === "ok" && plain.parsed.relative).toBeFalsy();
    expect(findDateSurface("а на вчера?")).toBe("вчера");
    expect(findDateSurface("позавчера что было")).toBe("позавчера");
  });
});

describe("the offline interpreter's names", () => {
  it.each([
    ["Какие хвосты по поставщику Альфа-Снаб на вчера?", "Альфа-Снаб"],
    ["Сколько мы должны Ромашке?", "Ромашке"],
    ["Долг перед Вектором", "Вектором"],
    ["По каким поставщикам висят хвосты?", null],
  ])("%s → %s", (text, name) => expect(findCounterpartySurface(text)).toBe(name));
});
