// Issue 42's last Evidence gaps, pure: a question that asks for a due date makes the balance route
// read the party's payment terms (the plan's step, the interpreter's intent), and a supplier-wide plan
// gets the engine's name check — one directory read per register row's code, outside the floor.
import { describe, expect, it } from "vitest";
import { emptyConversationState } from "../../../systems/evidence/artifacts";
import { asksDueDate } from "../../../systems/evidence/due-question";
import { buildFrame, resolveScope } from "../../../systems/evidence/frame-resolve";
import { interpretDeterministic } from "../../../systems/evidence/interpret-rules";
import { planFor, validatePlan, withNameCheck } from "../../../systems/evidence/plan-rules";

const scopeOf = (text: string) => {
  const state = emptyConversationState("c");
  const out = interpretDeterministic(text, state)!;
  const frame = buildFrame(
    out,
    { requestId: "r", conversationId: "c", turn: 1, text, interpretedBy: "deterministic" },
    state,
  );
  return resolveScope(frame, state);
};

describe("a due-date question", () => {
  it("is read in any phrasing; a balance or payment question is not one", () => {
    for (const q of [
      "До какого числа нужно оплатить ООО «Альфа-Снаб»?",
      "Какого числа истёк срок оплаты по Вектору?",
      "Когда надо было рассчитаться с ТехноПоставкой?",
      "Какой срок платежа по договору с Альфа-Снабом?",
      "К какому сроку погасить долг перед Вектором?",
    ])
      expect(asksDueDate(q), q).toBe(true);
    for (const q of ["Сколько мы должны ООО «Альфа-Снаб»?", "Какие оплаты были ООО «Вектор»?", "Сальдо по Вектору"])
      expect(asksDueDate(q), q).toBe(false);
  });

  it("about one party is a balance question whose plan reads that party's payment terms", () => {
    const s = scopeOf("До какого числа нужно оплатить ООО «Альфа-Снаб»?");
    expect(s.intent).toBe("counterparty_balance");
    expect(s.asks_due_date).toBe(true);
    const p = planFor(s, "r");
    const terms = p.steps.find((x) => x.tool === "get_open_supplier_settlements");
    expect(terms?.input).toEqual({ as_of_date: "$S2.as_of_date", counterparty_id: "$S1.counterparty_id" });
    expect(validatePlan({ goal: p.goal, steps: p.steps, fallbacks: [], stop_conditions: [] }, s)).toEqual([]);
    // a balance question that does not ask for a date reads no payment terms
    const plain = planFor(scopeOf("Сколько мы должны ООО «Альфа-Снаб»?"), "r");
    expect(plain.steps.some((x) => x.tool === "get_open_supplier_settlements")).toBe(false);
  });
});

describe("the name check of a supplier-wide run", () => {
  it("reads the directory entry of each register row's code; a run that binds a party needs none", () => {
    const wide = withNameCheck(planFor(scopeOf("По каким поставщикам висят хвосты?"), "r"));
    const check = wide.steps.at(-1)!;
    expect(check).toMatchObject({
      type: "verify_counterparty_names",
      tool: "resolve_counterparty",
      input: { query: "$each.counterparty_id" },
      required: false,
      for_each: "S4.rows",
    });
    const balance = planFor(scopeOf("До какого числа нужно оплатить ООО «Альфа-Снаб»?"), "r");
    expect(withNameCheck(balance)).toEqual(balance);
    const named = planFor(scopeOf("Незакрытые остатки по поставщику Альфа-Снаб"), "r");
    expect(withNameCheck(named).steps).toHaveLength(named.steps.length);
  });
});
