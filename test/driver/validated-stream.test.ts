import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitSentences, ValidatedStream, type AnswerChecker } from "../../driver/validated-stream";

const rejecting = (bad: RegExp): AnswerChecker => ({
  sentence: (s) => (bad.test(s) ? [`отклонено: ${s.trim()}`] : []),
  whole: () => [],
});

function run(checker: AnswerChecker, deltas: string[]) {
  const released: string[] = [];
  const gate = new ValidatedStream(checker, (d) => released.push(d));
  for (const d of deltas) gate.push(d);
  return { result: gate.end(), released: released.join("") };
}

describe("splitSentences", () => {
  it("splits at sentence ends and newlines, not inside numbers and dates", () => {
    const { complete, rest } = splitSentences("Долг 1.5 млн на 10.04.2026. Второе!\nТретье «в кавычках.» Хвост");
    expect(complete).toEqual(["Долг 1.5 млн на 10.04.2026. ", "Второе!\n", "Третье «в кавычках.» "]);
    expect(rest).toBe("Хвост");
  });
});

describe("ValidatedStream", () => {
  it("releases checked sentences and never a rejected one or anything after it", () => {
    const { result, released } = run(rejecting(/2050/), [
      "Поставщик А должен 100 ₽. ",
      "Поставщик Б дол",
      "жен 2050 ₽. Всё.",
    ]);
    expect(released).toBe("Поставщик А должен 100 ₽. ");
    expect(result.ok).toBe(false);
    expect(result.text).toBe("Поставщик А должен 100 ₽. Поставщик Б должен 2050 ₽. Всё.");
    expect(result.issues[0]).toContain("2050");
  });

  it("checks the unfinished tail and the whole text at the end", () => {
    const whole: AnswerChecker = { sentence: () => [], whole: (t) => (t.includes("нет блока") ? ["нет блока"] : []) };
    expect(run(whole, ["Раз. ", "нет блока"]).result).toMatchObject({ ok: false, released: "Раз. нет блока" });
    expect(run(rejecting(/плохо/), ["Хорошо. ", "плохо"]).released).toBe("Хорошо. ");
  });

  it("released text is always a prefix of the model text, however the deltas are cut", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("Да", ". ", "!", "\n", " ", "плохо", "1.5", "»", "x"), { maxLength: 40 }),
        fc.integer({ min: 1, max: 7 }),
        (parts, cut) => {
          const text = parts.join("");
          const deltas: string[] = [];
          for (let i = 0; i < text.length; i += cut) deltas.push(text.slice(i, i + cut));
          const { result, released } = run(rejecting(/плохо/), deltas);
          expect(result.text).toBe(text);
          expect(text.startsWith(released)).toBe(true);
          expect(released.includes("плохо")).toBe(false);
          if (!text.includes("плохо")) expect(released).toBe(text);
        },
      ),
    );
  });

  it("stays linear on a reply with no sentence boundary", () => {
    const gate = new ValidatedStream({ sentence: () => [], whole: () => [] }, () => {});
    const chunk = "а".repeat(64);
    for (let i = 0; i < 20_000; i++) gate.push(chunk); // 1.28 MB in 64-char chunks
    expect(gate.end().text.length).toBe(1_280_000);
  });
});
