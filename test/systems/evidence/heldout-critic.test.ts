// Held-out probes (issue 42, Evidence item 4 and a regression): the critic proposes kinds of gaps
// and actions from a closed set, each bound to a fact, a plan step, a failed tool or the run's
// scope; the engine words them. A document to request for the run's party or period is a depth
// gap, not an invention. The critic never writes what is shown: its amounts and statuses —
// in its old free-text fields, in fields of its own, inside a reference, in a model planner's step
// purpose it points at — never reach the user, and a point that binds to nothing is dropped.
import { describe, expect, it } from "vitest";
import { planStep } from "../../utils/evidence-api";
import type { ScriptStep } from "../../utils/scripted-llm";
import { BALANCE, block, probe, shown, useHeldout, type Probe } from "./heldout-setup";

const h = useHeldout();
const PARTY = "Какое сальдо по ООО «Альфа-Снаб» на 31.03.2026?";
const PARTY_PROBE: Probe = { intent: BALANCE, counterparty: "ООО «Альфа-Снаб»" };
const SUPPLIERS = "Любые незакрытые остатки по поставщикам на 31.03.2026";
/** On 15.02.2026 the built-in plan answers fully: one supplier, everything consistent. */
const CLEAN = "Любые незакрытые остатки по поставщикам на 15.02.2026";
const DEPTH = [
  "INSUFFICIENT_DOCUMENT_DEPTH",
  "MISSING_SUPPORTING_DOCUMENT",
  "EVIDENCE_DEPTH_LIMIT",
  "PARTIAL_MATCH_IN_1C",
];

type Fact = { id: string; type: string; entity: string };
/** A critic reply written after reading the critic prompt's evidence (the facts' ids of this run). */
const critic = (write: (facts: Fact[]) => unknown): ScriptStep => ({
  reply: (call) => {
    const input = JSON.parse(call.messages.at(-1)!.content) as { evidence: { facts: Fact[] } };
    return JSON.stringify(write(input.evidence.facts));
  },
});
const factOf = (facts: Fact[], entity: RegExp, type = /balance/) =>
  facts.find((f) => entity.test(f.entity) && type.test(f.type))!.id;

/** Ask with the critic's reply scripted (string or written after reading its prompt). */
async function ask(text: string, reply: ScriptStep, o: Probe = {}) {
  return probe(h.api, text, { ...o, critic: reply });
}

describe("closed-set points bound to this run are shown in the engine's words", () => {
  it("a document to request for the run's party is a depth gap (regression: it names no fact id)", async () => {
    const a = await ask(
      PARTY,
      JSON.stringify({ gaps: [{ kind: "document_to_request", ref: { scope: "party" } }], actions: [] }),
      PARTY_PROBE,
    );
    expect(block(a.final.answer, "Что не удалось установить")).toMatch(/документ[^\n]*Альфа-Снаб[^\n]*запрос/i);
    expect(a.final.reasonCodes.some((c) => DEPTH.includes(c))).toBe(true);
  });

  it("a document to request for the run's period (no party) is a depth gap naming the period", async () => {
    const a = await ask(
      SUPPLIERS,
      JSON.stringify({ gaps: [{ kind: "document_to_request", ref: { scope: "period" } }], actions: [] }),
    );
    expect(block(a.final.answer, "Что не удалось установить")).toMatch(/документ[^\n]*31\.03\.2026[^\n]*запрос/i);
  });

  it("a document to request lowers a full answer to a partial one, with a depth code", async () => {
    const a = await ask(
      CLEAN,
      JSON.stringify({
        gaps: [{ kind: "document_to_request", ref: { scope: "period" } }],
        actions: [{ kind: "request_documents", ref: { scope: "period" } }],
      }),
    );
    expect(a.final.outcome).toBe("PARTIALLY_ANSWERED");
    expect(a.final.reasonCodes.some((c) => DEPTH.includes(c))).toBe(true);
    expect(block(a.final.answer, "Что уточнить / следующий шаг")).toMatch(/Запрос\p{L}* [^\n]*документ/u);
  });

  const bound: [string, (f: Fact[]) => unknown, string, RegExp][] = [
    [
      "documents not checked, bound to Вектор's balance",
      (f) => ({ gaps: [{ kind: "documents_not_checked", ref: { fact_id: factOf(f, /Вектор/) } }], actions: [] }),
      "Что не удалось установить",
      /Вектор/,
    ],
    [
      "payments not reconciled, bound to ТехноПоставка's balance",
      (f) => ({
        gaps: [{ kind: "payments_not_reconciled", ref: { fact_id: factOf(f, /ТехноПоставка/) } }],
        actions: [],
      }),
      "Что не удалось установить",
      /ТехноПоставка[^\n]*оплат|оплат[^\n]*ТехноПоставка/,
    ],
    [
      "check posting, bound to Вектор's payment",
      (f) => ({ gaps: [], actions: [{ kind: "check_posting", ref: { fact_id: factOf(f, /Вектор/, /payment/) } }] }),
      "Что уточнить / следующий шаг",
      /проведени[^\n]*Вектор/,
    ],
    [
      "confirm the period, bound to the run's date",
      () => ({ gaps: [], actions: [{ kind: "confirm_period", ref: { scope: "period" } }] }),
      "Что уточнить / следующий шаг",
      /31\.03\.2026/,
    ],
    [
      "a deep check of Альфа-Снаб's documents, bound to its balance",
      (f) => ({ gaps: [], actions: [{ kind: "run_deep_check", ref: { fact_id: factOf(f, /Альфа-Снаб/) } }] }),
      "Что уточнить / следующий шаг",
      /Альфа-Снаб/,
    ],
  ];
  for (const [name, write, where, expected] of bound)
    it(name, async () => {
      const a = await ask(SUPPLIERS, critic(write));
      expect(a.final.coverage.critic.model).toBe("used");
      expect(block(a.final.answer, where)).toMatch(expected);
    });

  it("confirm the counterparty, bound to the run's party", async () => {
    const a = await ask(
      PARTY,
      JSON.stringify({ gaps: [], actions: [{ kind: "confirm_counterparty", ref: { scope: "party" } }] }),
      PARTY_PROBE,
    );
    expect(block(a.final.answer, "Что уточнить / следующий шаг")).toMatch(/Подтверд\p{L}*[^\n]*Альфа-Снаб/u);
  });

  it("a party's data found only in part, bound to the run's party", async () => {
    const a = await ask(
      PARTY,
      JSON.stringify({ gaps: [{ kind: "partial_match", ref: { scope: "party" } }], actions: [] }),
      PARTY_PROBE,
    );
    expect(block(a.final.answer, "Что не удалось установить")).toMatch(/Альфа-Снаб/);
    expect(a.final.outcome).not.toBe("FULLY_ANSWERED");
  });
});

describe("points that bind to nothing of this run are dropped", () => {
  const unbound: [string, unknown][] = [
    ["a fact this run does not hold", { gaps: [{ kind: "documents_not_checked", ref: { fact_id: "F99" } }] }],
    ["a plan step that does not exist", { gaps: [{ kind: "step_incomplete", ref: { step_id: "S42" } }] }],
    ["a retry of a tool that did not fail", { actions: [{ kind: "retry_step", ref: { tool: "get_payment_chain" } }] }],
    [
      "the party scope of a run about all suppliers",
      { gaps: [{ kind: "document_to_request", ref: { scope: "party" } }] },
    ],
    ["two references at once", { gaps: [{ kind: "partial_match", ref: { fact_id: "F2", scope: "party" } }] }],
  ];
  for (const [name, reply] of unbound)
    it(name, async () => {
      const a = await ask(CLEAN, JSON.stringify({ gaps: [], actions: [], ...(reply as object) }));
      expect(a.final.outcome).toBe("FULLY_ANSWERED");
      expect(a.final.coverage.critic.note).toMatch(/отброшен/);
      expect(block(a.final.answer, "Что не удалось установить")).not.toMatch(/запрос|не провер|полност/i);
    });
});

describe("the critic's free text never reaches the user", () => {
  const lies: [string, (f: Fact[]) => unknown][] = [
    [
      "«оспорено поставщиком, сумма к оплате …» in uncovered_points",
      () => ({
        gaps: [],
        actions: [],
        uncovered_points: ["Счёт № 137 оспорено поставщиком, сумма к оплате 47 500,00 ₽"],
      }),
    ],
    [
      "«оплатить повторно …» in next_best_actions",
      () => ({
        gaps: [],
        actions: [],
        next_best_actions: ["Оплатить повторно 95 000,00 ₽ по поступлению № 137"],
      }),
    ],
    [
      "a note addressed to the user",
      () => ({ gaps: [], actions: [], note: "Поставщик оспорил долг, оплатить повторно." }),
    ],
    [
      "a text field inside a gap",
      (f) => ({
        gaps: [
          {
            kind: "documents_not_checked",
            ref: { fact_id: factOf(f, /Альфа-Снаб/) },
            text: "Оплатить повторно 12 000,00 ₽",
          },
        ],
        actions: [],
      }),
    ],
    [
      "a comment inside a reference",
      (f) => ({
        gaps: [],
        actions: [
          {
            kind: "check_posting",
            ref: { fact_id: factOf(f, /Вектор/), comment: "оспорено поставщиком, к оплате 47 500" },
          },
        ],
      }),
    ],
    [
      "an amount written where a fact id goes",
      () => ({
        gaps: [{ kind: "partial_match", ref: { fact_id: "F3: оплатить повторно 95 000,00 ₽" } }],
        actions: [],
      }),
    ],
    [
      "a status written where a step id goes",
      () => ({
        gaps: [{ kind: "step_incomplete", ref: { step_id: "оспорено поставщиком, сумма к оплате 47 500" } }],
        actions: [],
      }),
    ],
    [
      "a kind outside the closed set, twice",
      () => ({
        gaps: [{ kind: "pay_again", ref: { scope: "party" }, amount: "95 000,00 ₽ оплатить повторно" }],
        actions: [],
      }),
    ],
    [
      "extra reasons with a status",
      () => ({
        gaps: [],
        actions: [],
        extra_reasons: [
          { reason_code: "CONFLICTING_EVIDENCE", message: "Долг оспорен поставщиком, сумма к оплате 47 500" },
        ],
      }),
    ],
  ];
  for (const [name, write] of lies)
    it(name, async () => {
      const bad = critic(write);
      const a = await probe(h.api, SUPPLIERS, { critic: bad });
      const leaks = shown(a)
        .split(/\n|(?<=",)/)
        .filter((l) => /оплатить повторно|оспор|сумма к оплате|47 500|12 000/i.test(l));
      expect(leaks).toEqual([]);
    });

  it("a step purpose written by the model planner, pointed at by the critic, is not shown", async () => {
    const step = (id: string, tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      planStep(id, tool, input, { purpose: "Оплатить повторно 95 000,00 ₽ — поставщик оспорил сумму", ...extra });
    const plan = {
      goal: "Остатки по поставщикам",
      steps: [
        step("S1", "resolve_period_or_asof", {}),
        step("S2", "get_open_supplier_settlements", { as_of_date: "$S1.as_of_date" }, { depends_on: ["S1"] }),
      ],
    };
    const a = await probe(h.api, SUPPLIERS, {
      plan: [JSON.stringify(plan)],
      critic: JSON.stringify({ gaps: [{ kind: "step_incomplete", ref: { step_id: "S2" } }], actions: [] }),
    });
    const leaks = shown(a)
      .split(/\n|(?<=",)/)
      .filter((l) => /оплатить повторно|оспорил|95 000,00 ₽ —/i.test(l));
    expect(leaks).toEqual([]);
  });
});
