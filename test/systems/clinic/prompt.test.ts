import { describe, expect, it } from "vitest";
import {
  buildBranchMessages,
  buildBranchSystemPrompt,
  buildRouterMessages,
  HARD_RETURN_PHRASE,
  routerHintBlock,
} from "../../../systems/clinic/prompt";
import { defaultRegistry } from "../../../systems/clinic/registry";
import { initialClinicState } from "../../../systems/clinic/types";
import type { ClinicState } from "../../../systems/clinic/types";

const reg = defaultRegistry();
const booking = (over: Partial<ClinicState> = {}): ClinicState => ({
  ...initialClinicState(),
  activeBranch: "new_booking",
  step: "qualify",
  slots: { name: "Алексей" },
  ...over,
});

describe("branch prompt assembly", () => {
  it("base prompt + rules + exit conditions + the step's prompt + the state block, in that order", () => {
    const p = buildBranchSystemPrompt({ registry: reg, state: booking(), hint: null, fragments: [] });
    const order = [
      reg.branches.new_booking.system_prompt,
      "[ПРАВИЛА]",
      "[УСЛОВИЯ ВЫХОДА]",
      "[ШАГ: qualify",
      "require_legal_rep",
      "[СОСТОЯНИЕ ДИАЛОГА]",
      "[ФОРМАТ ОТВЕТА]",
    ].map((s) => p.indexOf(s));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(p).toContain('Слоты: {"name":"Алексей"}');
    expect(p).toContain("допустимых переходов: qualify, present");
    expect(p).not.toContain("[ПОДСКАЗКА РОУТЕРА]");
    expect(p).not.toContain(HARD_RETURN_PHRASE);
  });

  it("the router hint is the seed's block, verbatim", () => {
    expect(routerHintBlock("general_info", "new_booking")).toBe(
      "[ПОДСКАЗКА РОУТЕРА]\nМаршрутизатор счёл, что тема — `general_info`.\nТы ведёшь сценарий `new_booking`.\nЕсли пациент сменил тему — выдай [INTENT_CHANGE: general_info].\nЕсли реплика в сценарии — зафиксируй в слот и продолжай.",
    );
    expect(buildBranchSystemPrompt({ registry: reg, state: booking(), hint: "general_info", fragments: [] })).toContain(
      routerHintBlock("general_info", "new_booking"),
    );
  });

  it("three soft insertions in a row add the hard instruction naming the step's question", () => {
    const p = buildBranchSystemPrompt({
      registry: reg,
      state: booking({ softInsertionCount: 3 }),
      hint: null,
      fragments: [],
    });
    expect(p).toContain(HARD_RETURN_PHRASE);
    expect(p).toContain(reg.stepGraphs.new_booking!.steps.find((s) => s.code === "qualify")!.question);
    expect(
      buildBranchSystemPrompt({ registry: reg, state: booking({ softInsertionCount: 2 }), hint: null, fragments: [] }),
    ).not.toContain(HARD_RETURN_PHRASE);
  });

  it("a branch without steps gets no step or slots, and knowledge fragments when given", () => {
    const p = buildBranchSystemPrompt({
      registry: reg,
      state: { ...initialClinicState(), activeBranch: "general_info" },
      hint: null,
      fragments: [{ docId: "hours", title: "Часы работы", text: "Ежедневно с 8 до 21.", score: 0.5 }],
    });
    expect(p).not.toContain("[ШАГ");
    expect(p).not.toContain("Слоты:");
    expect(p).toContain("[БАЗА ЗНАНИЙ]");
    expect(p).toContain("(1) Часы работы: Ежедневно с 8 до 21.");
    expect(p).not.toContain("STATE_JSON");
  });

  it("router and branch messages carry a bounded history and the patient's message last", () => {
    const history = Array.from({ length: 20 }, (_, i) => ({
      role: (i % 2 ? "assistant" : "user") as "user" | "assistant",
      text: `m${i}`,
    }));
    const r = buildRouterMessages(history, "вопрос");
    expect(r[0]!.role).toBe("system");
    expect(r.length).toBe(8);
    expect(r.at(-1)).toEqual({ role: "user", content: "вопрос" });
    expect(buildBranchMessages("sys", history, "вопрос").length).toBe(14);
  });
});
