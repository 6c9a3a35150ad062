// Held-out probes (issue 42, Evidence items 5–6 and the regressions of older sets): follow-ups
// keep what the user confirmed — «а на <date>?» keeps the party, «а по <party>?» keeps the date,
// whatever the interpreter model proposes; what a fault left unchecked is always shown, whatever
// the answer model chose; «Альфа» with two «Альфа…» parties is asked about or assumed with a
// reason code; a shallow model plan ends with EVIDENCE_DEPTH_LIMIT; a refused invented figure is
// named in the report.
import { describe, expect, it } from "vitest";
import type { Faults } from "../../../systems/evidence/mcp-server/server";
import { planStep, type EvidenceFinal } from "../../utils/evidence-api";
import { BALANCE, block, modelChoice, probe, useHeldout } from "./heldout-setup";
import { idsOf } from "./menu-choice";

const h = useHeldout();
const premise = (f: EvidenceFinal, kind: string) => {
  const p = f.premises.find((x) => x.kind === kind || x.key === kind)!;
  // a date premise may be stored as the user wrote it or as ISO: compare as dd.mm.yyyy
  return { ...p, value: p.value.replace(/^(\d{4})-(\d\d)-(\d\d)$/, "$3.$2.$1") };
};

describe("follow-ups keep the premises the user confirmed", () => {
  /** Turn 1 confirms ООО «Альфа-Снаб» on 31.03.2026. */
  async function afterAlfa() {
    const id = await h.api.conversation();
    const t1 = await probe(
      h.api,
      "Какое сальдо по ООО «Альфа-Снаб» на 31.03.2026?",
      { intent: BALANCE, counterparty: "ООО «Альфа-Снаб»" },
      id,
    );
    expect(premise(t1.final, "counterparty").status).toBe("confirmed");
    return id;
  }

  const newDate: [follow: string, proposed: string | undefined, date: string][] = [
    ["а на 15.02.2026?", "ООО «Вектор»", "15.02.2026"],
    ["А на 10.04.2026?", "АО «ТехноПоставка»", "10.04.2026"],
    ["а на 01.03.2026?", undefined, "01.03.2026"],
    ["а на 31.03.2026 что?", "ИП Смирнов", "31.03.2026"],
  ];
  for (const [follow, proposed, date] of newDate)
    it(`«${follow}» keeps ООО «Альфа-Снаб» (the model proposes ${proposed ?? "no party"})`, async () => {
      const id = await afterAlfa();
      const t2 = await probe(h.api, follow, { intent: BALANCE, counterparty: proposed, date }, id);
      expect(premise(t2.final, "counterparty")).toMatchObject({ value: "ООО «Альфа-Снаб»" });
      expect(premise(t2.final, "counterparty").status).not.toBe("assumed");
      expect(premise(t2.final, "time_scope")).toMatchObject({ status: "confirmed", value: date });
      expect(block(t2.final.answer, "Коротко")).toMatch(/Альфа-Снаб/);
      if (proposed) expect(t2.final.answer).not.toContain(proposed.replace(/^\S+ /, ""));
    });

  const newParty: [follow: string, surface: string, proposedDate: string | undefined, shownName: RegExp][] = [
    ["а по Вектору?", "Вектор", "15.03.2026", /Вектор/],
    ["а что по ТехноПоставке?", "ТехноПоставка", "10.04.2026", /ТехноПоставка/],
    ["А по ИП Смирнову?", "ИП Смирнов", undefined, /Смирнов/],
  ];
  for (const [follow, surface, proposedDate, shownName] of newParty)
    it(`«${follow}» keeps 31.03.2026 (the model proposes ${proposedDate ?? "no date"})`, async () => {
      const id = await afterAlfa();
      const t2 = await probe(h.api, follow, { intent: BALANCE, counterparty: surface, date: proposedDate ?? null }, id);
      expect(premise(t2.final, "counterparty").status).toBe("confirmed");
      expect(premise(t2.final, "time_scope")).toMatchObject({ status: "inherited", value: "31.03.2026" });
      expect(block(t2.final.answer, "Коротко")).toMatch(/31\.03\.2026/);
      expect(block(t2.final.answer, "Коротко")).toMatch(shownName);
      if (proposedDate) expect(t2.final.answer).not.toContain(proposedDate);
    });

  it("a chain: a new date, then a new party keeps the newest confirmed date", async () => {
    const id = await afterAlfa();
    await probe(h.api, "а на 15.02.2026?", { intent: BALANCE, counterparty: "ООО «Вектор»" }, id);
    const t3 = await probe(h.api, "а по Вектору?", { intent: BALANCE, counterparty: "Вектор", date: "31.03.2026" }, id);
    expect(premise(t3.final, "time_scope")).toMatchObject({ value: "15.02.2026" });
    expect(premise(t3.final, "time_scope").status).not.toBe("assumed");
  });
});

describe("what a fault left unchecked is always shown", () => {
  const faults: [string, Faults][] = [
    [
      "payments and closing documents failing",
      { get_payment_chain: { error: "x" }, get_related_closing_documents: { error: "x" } },
    ],
    ["the documents of the balance failing", { get_unclosed_documents_for_counterparty: { error: "сбой" } }],
    ["closing documents answering outside their schema", { get_related_closing_documents: { badOutput: true } }],
  ];
  const choices: [string, Parameters<typeof modelChoice>[0]][] = [
    [
      "a model that says nothing needs clarifying",
      (p) => ({ not_established: [], next_step: [], closing: "Ничего уточнять не нужно." }),
    ],
    [
      "a model that picks only «nothing to clarify»",
      (p) => ({ next_step: idsOf(p, "nothing_to_clarify"), not_established: idsOf(p, "no_gaps") }),
    ],
    [
      "a model that moves the gaps under «Что найдено»",
      (p) => ({ found: [...p.engine_choice.found, ...p.engine_choice.not_established], not_established: [] }),
    ],
  ];
  for (const [k, [fname, f]] of faults.entries())
    it(`${fname}, ${choices[k]![0]}`, async () => {
      await h.api.useMcp(await h.api.serveMcp(f));
      try {
        const a = await probe(h.api, "Любые незакрытые остатки по поставщикам на 31.03.2026", {
          answer: [modelChoice(choices[k]![1])],
        });
        const must = a.final.coverage.mandatory!;
        expect(must.not_established.length).toBeGreaterThan(0);
        expect(must.next_step.length).toBeGreaterThan(0);
        for (const x of must.not_established) expect(block(a.final.answer, "Что не удалось установить")).toContain(x);
        for (const x of must.next_step) expect(block(a.final.answer, "Что уточнить / следующий шаг")).toContain(x);
        expect(a.final.answer).not.toMatch(/Ничего уточнять не нужно|не удалось установить\.\*\*\n- Всё/);
      } finally {
        await h.api.restore();
      }
    });

  it("two faults and an answer model that breaks: the engine's answer shows them", async () => {
    await h.api.useMcp(
      await h.api.serveMcp({ get_payment_chain: { error: "x" }, get_related_closing_documents: { error: "x" } }),
    );
    try {
      const a = await probe(h.api, "Любые незакрытые остатки по поставщикам на 31.03.2026", {
        answer: ["Всё хорошо, ничего уточнять не нужно.", "{"],
      });
      for (const x of a.final.coverage.mandatory!.not_established) expect(a.final.answer).toContain(x);
      expect(a.final.answer).not.toMatch(/Ничего уточнять не нужно/);
    } finally {
      await h.api.restore();
    }
  });
});

describe("regressions from older held-out sets", () => {
  for (const [question, surface] of [
    ["Сколько мы должны Альфе на 31.03.2026?", "Альфе"],
    ["Какой у нас долг перед Альфой на 10.04.2026?", "Альфа"],
    ["Сколько должны Альфе?", "Альфе"],
  ] as const)
    it(`«${question}» with two «Альфа…» parties is asked or assumed with a reason code`, async () => {
      const a = await probe(h.api, question, { intent: BALANCE, counterparty: surface });
      if (a.final.outcome !== "BLOCKED_BY_AMBIGUITY") {
        expect(a.final.reasonCodes).toContain("ASSUMPTION_APPLIED_EXPLICITLY");
        expect(premise(a.final, "counterparty").status).toBe("assumed");
        expect(a.final.answer).toMatch(/Альфа-Трейд/);
      } else expect(block(a.final.answer, "Что уточнить / следующий шаг")).toMatch(/Альфа[^\n]*\?/);
      expect(a.final.outcome).not.toBe("FULLY_ANSWERED");
    });

  const date = planStep("S1", "resolve_period_or_asof", {});
  const register = (input: Record<string, unknown> = {}) =>
    planStep("S2", "get_open_supplier_settlements", { as_of_date: "$S1.as_of_date", ...input }, { depends_on: ["S1"] });
  const docs = planStep(
    "S3",
    "get_unclosed_documents_for_counterparty",
    { counterparty_id: "$each.counterparty_id", as_of_date: "$S1.as_of_date" },
    { depends_on: ["S2"], for_each: "S2.rows", required: false },
  );
  const shallow: [string, unknown[]][] = [
    ["the register read only, overdue only", [date, register({ overdue_only: true })]],
    ["documents but no payments and no closing documents", [date, register(), docs]],
    ["documents checked only for the overdue rows", [date, register(), { ...docs, filter: "overdue_amount > 0" }]],
  ];
  for (const [name, steps] of shallow)
    it(`a shallow model plan (${name}) ends with EVIDENCE_DEPTH_LIMIT`, async () => {
      const a = await probe(h.api, "Любые незакрытые остатки по поставщикам на 15.02.2026", {
        plan: [JSON.stringify({ goal: "Остатки", steps })],
      });
      expect(a.final.reasonCodes).toContain("EVIDENCE_DEPTH_LIMIT");
      expect(a.final.outcome).not.toBe("FULLY_ANSWERED");
    });

  const invented: [string, string, string][] = [
    ["closing", "Итого к оплате 123 456,78 ₽.", "123 456,78 ₽"],
    ["opening", "Долг составляет 95000 руб.", "95000 руб."],
    ["closing", "Просрочено 12% от суммы.", "12%"],
    ["opening", "Всего 7 поставщиков с долгом.", "7"],
  ];
  for (const [field, line, figure] of invented)
    it(`a refused invented figure in the ${field} is named: «${figure}»`, async () => {
      const a = await probe(h.api, "Любые незакрытые остатки по поставщикам на 15.02.2026", {
        answer: [modelChoice(() => ({ [field]: line }))],
      });
      expect(a.final.validation?.ok).toBe(false);
      expect(a.final.validation?.issues.join("\n")).toContain(`«${figure}»`);
      expect(a.final.answer).not.toContain(line);
      expect((await h.api.artifacts(a.final.runId)).rejected_answer?.issues.join("\n")).toContain(`«${figure}»`);
    });
});
