// Held-out probes (issue 42, Evidence item 3): lies built only from true pieces — a field under
// another field's words, two parties' amounts swapped, an advance stated as our debt, a fact struck
// through, «A или B», the conclusion moved out of «Коротко» — written the way a model answering the
// real prompt would try them: through its free opening and closing, ids dressed up with words or
// markup, claims put where their kind does not stand, fields of its own. None may reach the user,
// and every line the user sees is a sentence the engine rendered.
import { describe, expect, it } from "vitest";
import type { Asked } from "../../utils/evidence-api";
import { block, menuOf, modelChoice, probe, shortOf, shown, useHeldout } from "./heldout-setup";
import { idsOf, type AnswerPrompt } from "./menu-choice";

const h = useHeldout();
const Q = "Любые незакрытые остатки по поставщикам на 31.03.2026";

/** Every line of the four listed blocks is a claim of the menu (or a document nested under its own party). */
async function onlyEngineSentences(a: Asked) {
  const menu = await menuOf(h.api, a);
  const texts = new Set(menu.map((c) => c.text));
  const lines = ["Что проверено", "Что найдено", "Что не удалось установить", "Что уточнить / следующий шаг"]
    .flatMap((b) => block(a.final.answer, b).split("\n"))
    .filter((l) => l.trim());
  for (const l of lines) {
    const nested = l.match(/^ {2}- (не оплачено: .*)$/);
    if (nested) expect(menu.some((c) => c.text.endsWith(nested[1]!))).toBe(true);
    else expect(texts.has(l.replace(/^- /, "")), l).toBe(true);
  }
}

type Lie = [name: string, choose: (p: AnswerPrompt) => Record<string, unknown>, never: RegExp];
const conclusion = (p: AnswerPrompt) => idsOf(p, "conclusion")[0]!;
const overdueAlfa = (p: AnswerPrompt) => idsOf(p, "overdue_part", /Альфа-Снаб/)[0]!;
const balanceOf = (p: AnswerPrompt, who: RegExp) => idsOf(p, "open_balance", who)[0]!;

const lies: Lie[] = [
  // a field under another field's words
  [
    "the overdue part introduced as the open balance",
    (p) => ({ opening: "Открытый остаток долга такой:", short: [conclusion(p), overdueAlfa(p)] }),
    /Открытый остаток долга такой/,
  ],
  [
    "the document total called the balance in the closing",
    (p) => ({ closing: "Сумма документа и есть остаток к оплате." }),
    /Сумма документа и есть остаток/,
  ],
  [
    "a document's date stated as the balance date",
    (p) => ({ opening: "Остатки приведены на дату документа, пятнадцатое марта." }),
    /пятнадцатое марта/,
  ],
  [
    "a label of its own for a claim (a field the schema lacks)",
    (p) => ({ labels: { [overdueAlfa(p)]: "Открытый остаток" }, short: [conclusion(p), overdueAlfa(p)] }),
    /Открытый остаток(?! )/,
  ],
  [
    "an id dressed with words",
    (p) => ({ short: [conclusion(p), `${overdueAlfa(p)} (остаток к оплате)`] }),
    /остаток к оплате/,
  ],
  // two parties swapped
  [
    "a closing that swaps two parties' amounts",
    () => ({ closing: "Суммы Альфа-Снаба и Вектора следует читать наоборот." }),
    /читать наоборот/,
  ],
  [
    "a sentence instead of an id, with another party's amount",
    (p) => ({ short: [conclusion(p), "ООО «Вектор»: остаток 95 000,00 ₽"] }),
    /Вектор»: остаток 95/,
  ],
  [
    "a document chosen right after another party's balance",
    (p) => ({
      found: [
        balanceOf(p, /ТехноПоставка/),
        ...idsOf(p, "document_unpaid", /№ 137/),
        balanceOf(p, /Альфа-Снаб/),
        ...idsOf(p, "document_unpaid", /№ 55/),
      ],
    }),
    /ТехноПоставка»: остаток[^\n]*\n {2}- не оплачено: [^\n]*№ 137/,
  ],
  // an advance stated as our debt
  [
    "a closing that turns the advance into our debt",
    () => ({ closing: "Также мы должны ИП Смирнову." }),
    /должны ИП Смирнову/,
  ],
  [
    "the advance chosen as a gap",
    (p) => ({ not_established: [...p.engine_choice.not_established, ...idsOf(p, "advance_paid")] }),
    /Что не удалось установить\.\*\*\n(?:- [^\n]*\n)*- ИП Смирнов[^\n]*аванс/,
  ],
  [
    "an opening that calls the advance a debt",
    () => ({ opening: "Долг перед Смирновым тоже есть." }),
    /Долг перед Смирновым/,
  ],
  // markup
  ["a fact struck through in the opening", () => ({ opening: "~~Долгов нет~~" }), /~~|Долгов нет/],
  ["an id struck through", (p) => ({ short: [conclusion(p), `~~${overdueAlfa(p)}~~`] }), /~~/],
  ["HTML strike-through in the closing", () => ({ closing: "<s>ООО «Альфа-Снаб»</s> уже оплачен" }), /<s>|уже оплачен/],
  ["a quote block restyling a claim", () => ({ closing: "> Остаток по Вектору снят" }), /снят/],
  // «A или B»
  ["two amounts offered as alternatives", () => ({ closing: "Долг 95 000 или 120 000 ₽." }), /или 120/],
  [
    "two ids offered as alternatives",
    (p) => ({ short: [conclusion(p), `${balanceOf(p, /Альфа-Снаб/)} или ${balanceOf(p, /Вектор/)}`] }),
    /C\d+ или C\d+/,
  ],
  [
    "two parties offered as alternatives in words",
    () => ({ opening: "Речь об Альфа-Снабе или о Векторе." }),
    /Речь об Альфа-Снабе/,
  ],
  // the conclusion moved out of «Коротко»
  [
    "the conclusion chosen under «Что найдено»",
    (p) => ({ short: [], found: [conclusion(p), ...p.engine_choice.found] }),
    /Что найдено\.\*\*\n- На 31\.03\.2026/,
  ],
  ["a legacy slot instead of the conclusion", () => ({ short: ["{K0}"] }), /\{K0\}/],
  ["a legacy slot in the closing", () => ({ closing: "{K0}" }), /\{K0\}/],
  [
    "a summary field of its own",
    () => ({ summary: "Долгов перед поставщиками нет." }),
    /Долгов перед поставщиками нет/,
  ],
  ["a fact id instead of a claim id", () => ({ short: ["F2"] }), /^\*\*Коротко\.\*\* F2/m],
];

describe("lies built from true pieces do not reach the user", () => {
  for (const [name, choose, never] of lies)
    it(name, async () => {
      const a = await probe(h.api, Q, { answer: [modelChoice(choose)] });
      expect(a.final.package.composed_by).toBe("model");
      expect(shown(a)).not.toMatch(never);
      expect(a.final.validation?.issues.length, "the refusal is recorded").toBeGreaterThan(0);
      // the conclusion leads «Коротко» whatever the model did
      const menu = await menuOf(h.api, a);
      expect(shortOf(a).startsWith(menu.find((c) => c.kind === "conclusion")!.text)).toBe(true);
      await onlyEngineSentences(a);
    });

  it("the conclusion leads «Коротко» even when the model puts the total first", async () => {
    const a = await probe(h.api, Q, {
      answer: [modelChoice((p) => ({ short: [...idsOf(p, "total", /Всего наш долг/), conclusion(p)] }))],
    });
    const menu = await menuOf(h.api, a);
    expect(shortOf(a).startsWith(menu.find((c) => c.kind === "conclusion")!.text)).toBe(true);
  });

  it("the advance stays an advance wherever the model puts it", async () => {
    const a = await probe(h.api, Q, {
      answer: [modelChoice((p) => ({ short: [conclusion(p), ...idsOf(p, "advance_paid")] }))],
    });
    const smirnov = shortOf(a).slice(shortOf(a).lastIndexOf("ИП Смирнов"));
    expect(smirnov).toMatch(/аванс/);
    expect(smirnov).not.toMatch(/долг|должны/);
  });

  it("a true answer in the model's own order is shown unchanged (the control)", async () => {
    const a = await probe(h.api, Q, {
      answer: [
        modelChoice((p) => ({
          opening: "Здравствуйте! Вот результаты проверки.",
          found: [...p.engine_choice.found].reverse(),
        })),
      ],
    });
    expect(a.final.validation?.issues ?? []).toEqual([]);
    expect(a.final.answer.startsWith("Здравствуйте! Вот результаты проверки.")).toBe(true);
    await onlyEngineSentences(a);
  });
});
