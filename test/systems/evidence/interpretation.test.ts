import { describe, expect, it } from "vitest";
import { emptyConversationState, QueryFrame, type ConversationState } from "../../../systems/evidence/artifacts";
import { buildFrame, resolveScope } from "../../../systems/evidence/frame-resolve";
import { findCounterpartySurface, interpretDeterministic } from "../../../systems/evidence/interpret-rules";
import { findDateSurface, parseDatePhrase } from "../../../systems/evidence/mcp-server/dates";
import { planFor, validatePlan } from "../../../systems/evidence/plan-rules";
import { outcomeClassOf, OUTCOME_CLASSES, REASON_CODES } from "../../../systems/evidence/reason-codes";

const W = "2026-04-10";
const frameOf = (text: string, state: ConversationState = emptyConversationState("c"), turn = 1) => {
  const out = interpretDeterministic(text, state);
  if (!out) return null;
  return buildFrame(out, { requestId: "r", conversationId: "c", turn, text, interpretedBy: "deterministic" }, state);
};

describe("vocabulary", () => {
  it("has the seed's twenty reason codes plus MODEL_REQUIRED, and the seven outcome classes", () => {
    expect(REASON_CODES).toHaveLength(28); // + the §12.3 situations' own codes, MODEL_OUTPUT_INVALID and UNTRUSTED_TOOL_STRING
    expect(REASON_CODES).toContain("NO_MATCH_IN_1C");
    expect(outcomeClassOf("PARTIALLY_ANSWERED")).toBe("PARTIALLY_ANSWERED");
    expect(outcomeClassOf("clarification")).toBe("BLOCKED_BY_AMBIGUITY");
    expect(outcomeClassOf("plain_answer")).toBe("UNCLASSIFIED");
    expect(outcomeClassOf("plain_answer", ["unsupported_task"])).toBe("MISROUTED");
    expect(outcomeClassOf("clarification", ["target_not_found"])).toBe("FAILED_TO_BIND_ENTITIES");
    expect(outcomeClassOf("clarification", ["ambiguous_target"])).toBe("BLOCKED_BY_AMBIGUITY");
    expect(outcomeClassOf("model_unavailable")).toBe("BLOCKED_BY_TOOLING");
    expect(outcomeClassOf("escalated")).toBe("ESCALATED");
    expect(OUTCOME_CLASSES).toEqual([
      "FULLY_ANSWERED",
      "PARTIALLY_ANSWERED",
      "BLOCKED_BY_AMBIGUITY",
      "BLOCKED_BY_MISSING_DATA",
      "BLOCKED_BY_TOOLING",
      "MISROUTED",
      "FAILED_TO_BIND_ENTITIES",
    ]);
  });
});

describe("dates", () => {
  it.each([
    ["на 31.03.2026", "2026-03-31"],
    ["на 2026-02-15", "2026-02-15"],
    ["на 31 марта", "2026-03-31"],
    ["на 1 января 2026 года", "2026-01-01"],
    ["на конец марта", "2026-03-31"],
    ["на конец месяца", "2026-03-31"],
    ["на конец квартала", "2026-03-31"],
    ["на конец 2025 года", "2025-12-31"],
    ["за февраль", "2026-02-28"],
    ["на сегодня", W],
  ])("%s → %s", (text, iso) => {
    expect(parseDatePhrase(text, W)?.as_of_date).toBe(iso);
    expect(findDateSurface(`Хвосты ${text}?`)).not.toBeNull();
  });

  it("reads no date where there is none, and rejects impossible dates", () => {
    expect(parseDatePhrase("по поставщикам", W)).toBeNull();
    expect(parseDatePhrase("на 31.02.2026", W)).toBeNull();
    expect(findDateSurface("По каким поставщикам висят хвосты?")).toBeNull();
  });
});

describe("deterministic interpreter and scope", () => {
  it("keeps the original question beside the normalized one, and flags «хвосты» and the missing date", () => {
    const q = "По каким поставщикам висят хвосты?";
    const f = frameOf(q)!;
    expect(QueryFrame.parse(f)).toBeTruthy();
    expect(f.original_user_question).toBe(q);
    expect(f.normalized_question).not.toBe(q);
    expect(f.business_intent).toBe("detect_open_supplier_settlements");
    expect(f.business_terms[0]).toMatchObject({ surface: "хвосты", reading: null, explicit: false });
    const s = resolveScope(f, emptyConversationState("c"));
    expect(s.gate).toBe("proceed");
    expect(s.reasons).toEqual(["MISSING_AS_OF_DATE", "ASSUMPTION_APPLIED_EXPLICITLY", "AMBIGUOUS_BUSINESS_TERM"]);
    expect(s.premises.filter((p) => p.status === "assumed").map((p) => p.kind)).toEqual([
      "time_scope",
      "business_term",
    ]);
  });

  it("reads counterparties, intents and explicit readings", () => {
    expect(findCounterpartySurface("Какое сальдо по ООО «Альфа-Снаб»?")).toBe("Альфа-Снаб");
    expect(findCounterpartySurface("долг по Вектор на 31.03")).toBe("Вектор");
    expect(findCounterpartySurface("ИНН 7702345678")).toBe("7702345678");
    expect(frameOf("Какое сальдо по ООО «Альфа-Снаб»?")!.business_intent).toBe("counterparty_balance");
    expect(frameOf("Какие неоплаченные документы у ООО «Вектор»?")!.business_intent).toBe("unclosed_documents");
    expect(frameOf("Покажи оплаты по Смирнов")!.business_intent).toBe("payment_chain");
    expect(frameOf("Просроченные хвосты по поставщикам на 31.03.2026")!.business_terms[0]).toMatchObject({
      reading: "overdue_settlements",
      explicit: true,
    });
    expect(frameOf("Какая погода в Москве?")).toBeNull();
  });

  it("a counterparty question without a counterparty asks which one", () => {
    const s = resolveScope(frameOf("Покажи оплаты по нему")!, emptyConversationState("c"));
    expect(s).toMatchObject({
      gate: "clarify",
      reasons: [
        "MISSING_AS_OF_DATE",
        "ASSUMPTION_APPLIED_EXPLICITLY",
        "QUESTION_UNDER_SPECIFIED",
        "NEEDS_USER_CONFIRMATION",
      ],
    });
  });

  it("inherits entities and dates, and an inherited assumption stays an assumption", () => {
    const state: ConversationState = {
      ...emptyConversationState("c"),
      turn: 1,
      active_intent: "counterparty_balance",
      active_entities: [
        {
          type: "counterparty",
          surface: "Альфа-Снаб",
          value: "ООО «Альфа-Снаб»",
          entity_id: "cp-alfa-snab",
          premise: "confirmed",
          since_turn: 1,
        },
      ],
      active_time_scope: { as_of_date: W, surface: null, premise: "assumed", since_turn: 1 },
    };
    const f = frameOf("А какие по нему неоплаченные документы?", state, 2)!;
    const s = resolveScope(f, state);
    expect(s.counterparty).toMatchObject({ surface: "ООО «Альфа-Снаб»", premise: "inherited" });
    expect(s.time).toMatchObject({ text: W, premise: "assumed", source: "previous_turn" });
    expect(s.reasons).toContain("ASSUMPTION_APPLIED_EXPLICITLY");
    const dated = resolveScope(frameOf("А на 31 марта?", state, 2)!, state);
    expect(dated.time).toMatchObject({ text: "31 марта", premise: "confirmed" });
    expect(dated.reasons).toEqual([]);
  });

  it("a short reply to an open clarification continues the pending question", () => {
    const state: ConversationState = {
      ...emptyConversationState("c"),
      turn: 1,
      pending_question: "Какое сальдо по Альфа?",
      pending_intent: "counterparty_balance",
    };
    const f = frameOf("Альфа-Снаб", state, 2)!;
    expect(f.business_intent).toBe("counterparty_balance");
    expect(f.context_question).toBe("Какое сальдо по Альфа?");
    expect(f.entity_candidates.find((e) => e.type === "counterparty")?.surface).toBe("Альфа-Снаб");
  });
});

describe("plans", () => {
  const s = resolveScope(frameOf("Какое сальдо по ООО «Альфа-Снаб» на 31.03.2026?")!, emptyConversationState("c"));
  it("the deterministic plan passes the check a model plan must pass", () => {
    const p = planFor(s, "r");
    expect(p.steps.filter((x) => x.required).map((x) => x.tool)).toEqual([
      "resolve_counterparty",
      "resolve_period_or_asof",
      "get_balance_as_of",
    ]);
    expect(validatePlan({ goal: p.goal, steps: p.steps, fallbacks: [], stop_conditions: [] }, s)).toEqual([]);
  });

  it("a model plan may not write ids or dates as literals, skip the core tool or reference later steps", () => {
    const issues = validatePlan(
      {
        goal: "g",
        fallbacks: [],
        stop_conditions: [],
        steps: [
          {
            step_id: "S1",
            type: "q",
            tool: "get_payment_chain",
            input: { counterparty_id: "cp-alfa-snab", as_of_date: "$S2.as_of_date" },
            required: true,
            depends_on: ["S2"],
            for_each: null,
            filter: null,
            purpose: "",
          },
          {
            step_id: "S2",
            type: "d",
            tool: "resolve_period_or_asof",
            input: { when: "вчера" },
            required: true,
            depends_on: [],
            for_each: null,
            filter: null,
            purpose: "",
          },
        ],
      },
      s,
    );
    expect(issues.join("\n")).toMatch(/counterparty_id должен ссылаться/);
    expect(issues.join("\n")).toMatch(/неизвестный или более поздний шаг S2/);
    expect(issues.join("\n")).toMatch(/нет параметра when/);
    expect(issues.join("\n")).toMatch(/нет обязательного шага с инструментом get_balance_as_of/);
  });
});
