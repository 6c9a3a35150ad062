import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import { initialClinicState } from "../../../systems/clinic/types";
import { createClinicDialogueMachine } from "../../../systems/clinic/dialogue.machine";
import { defaultRegistry } from "../../../systems/clinic/registry";
import { LOOP_GUARD_REPLY } from "../../../systems/clinic/templates";
import { HARD_RETURN_PHRASE } from "../../../systems/clinic/prompt";
import { createRunner } from "./runner";
import type { TurnResult } from "./runner";
import { stepTail } from "../../utils/clinic-api";

function ok(r: TurnResult) {
  if (!r.ok) throw new Error("turn failed");
  return r;
}

type Runner = ReturnType<typeof createRunner>;

/** One new_booking turn that must succeed: the router keeps the booking branch, which answers `branch` in order. */
const booking = (run: Runner, text: string, ...branch: string[]) =>
  ok(run.turn(text, { router: ["new_booking"], branch }));

/** A fresh dialogue whose first booking turn reached the qualify step with the specialist already known. */
function atQualify(text: string, specialist: string): Runner {
  const run = createRunner(defaultRegistry());
  booking(run, text, `Как вас зовут?${stepTail("qualify", { specialist })}`);
  return run;
}

describe("clinic dialogue machine", () => {
  it("enters the router's branch on the first turn without counting a handoff", () => {
    const run = createRunner(defaultRegistry());
    const r = ok(
      run.turn("Хочу к ЛОРу", {
        router: ["new_booking"],
        branch: [`Как вас зовут?${stepTail("intro", { specialist: "ЛОР" })}`],
      }),
    );
    expect(r.state).toMatchObject({
      activeBranch: "new_booking",
      routerDecision: "new_booking",
      step: "intro",
      slots: { specialist: "ЛОР" },
      handoffCount: 0,
    });
    expect(r.reply).toBe("Как вас зовут?");
    expect(r.calls).toEqual({ router: 1, branch: 1 });
  });

  it("rejects a skipped step but keeps the slots the model collected", () => {
    const run = createRunner(defaultRegistry());
    const r = ok(
      run.turn("Запишите к неврологу", {
        router: ["new_booking"],
        branch: [`Записала!${stepTail("book", { specialist: "невролог" })}`],
      }),
    );
    expect(r.state.step).toBe("intro");
    expect(r.events).toContain("transition_rejected");
    expect(r.state.slots).toEqual({ specialist: "невролог" });
  });

  it("sticky: a differing router decision inside the booking adds the hint block, not a handoff", () => {
    const run = atQualify("Хочу к терапевту", "терапевт");
    const r = ok(
      run.turn("А сколько стоит приём?", {
        router: ["price_question"],
        branch: [`2500 рублей. Так как вас зовут?${stepTail("qualify", {}, true)}`],
      }),
    );
    expect(r.state).toMatchObject({
      activeBranch: "new_booking",
      routerDecision: "price_question",
      step: "qualify",
      handoffCount: 0,
      softInsertionCount: 1,
    });
    expect(r.events).toEqual(expect.arrayContaining(["sticky", "soft_insertion"]));
    expect(r.events).not.toContain("handoff");
    const system = r.effects.find((e) => e.type === "effect.branch")!.system!;
    expect(system).toContain(
      "[ПОДСКАЗКА РОУТЕРА]\nМаршрутизатор счёл, что тема — `price_question`.\nТы ведёшь сценарий `new_booking`.",
    );
    expect(system).toContain("[INTENT_CHANGE: price_question]");
  });

  it("three soft insertions in a row put the hard return instruction into the next prompt; a step change resets the counter", () => {
    const run = createRunner(defaultRegistry());
    ok(run.turn("Запись к терапевту", { router: ["new_booking"], branch: [`Как вас зовут?${stepTail("qualify")}`] }));
    for (let i = 1; i <= 3; i++) {
      const r = ok(
        run.turn(`боковой ${i}`, { router: ["general_info"], branch: [`Ответ ${i}.${stepTail("qualify", {}, true)}`] }),
      );
      expect(r.state.softInsertionCount).toBe(i);
      expect(r.effects.find((e) => e.type === "effect.branch")!.system).not.toContain(HARD_RETURN_PHRASE);
    }
    const r4 = ok(
      run.turn("Меня зовут Анна, болит спина", {
        router: ["new_booking"],
        branch: [`Понятно.${stepTail("present", { name: "Анна", reason: "боль в спине" })}`],
      }),
    );
    expect(r4.effects.find((e) => e.type === "effect.branch")!.system).toContain(HARD_RETURN_PHRASE);
    expect(r4.state.softInsertionCount).toBe(0);
    expect(r4.state.step).toBe("present");
  });

  it("a soft insertion interrupted by a normal answer starts counting again", () => {
    const run = createRunner(defaultRegistry());
    ok(run.turn("Запись", { router: ["new_booking"], branch: [`Как вас зовут?${stepTail("qualify")}`] }));
    ok(run.turn("парковка?", { router: ["general_info"], branch: [`Есть.${stepTail("qualify", {}, true)}`] }));
    ok(run.turn("парковка?", { router: ["general_info"], branch: [`Есть.${stepTail("qualify", {}, true)}`] }));
    const r = ok(
      run.turn("Анна", {
        router: ["new_booking"],
        branch: [`Анна, что беспокоит?${stepTail("qualify", { name: "Анна" })}`],
      }),
    );
    expect(r.state.softInsertionCount).toBe(0);
  });

  it("INTENT_CHANGE from the booking suspends it, counts a handoff and calls the new branch; returning resumes it", () => {
    const run = createRunner(defaultRegistry());
    ok(
      run.turn("Запишите к кардиологу, я Ольга", {
        router: ["new_booking"],
        branch: [`Ольга, что беспокоит?${stepTail("qualify", { name: "Ольга", specialist: "кардиолог" })}`],
      }),
    );
    const r = ok(
      run.turn("А цены на анализы?", {
        router: ["price_question"],
        branch: ["[INTENT_CHANGE: price_question]", "ОАК — 600 рублей."],
        fragments: [{ docId: "prices", title: "Цены", text: "ОАК — 600 рублей", score: 1 }],
      }),
    );
    expect(r.state).toMatchObject({
      activeBranch: "price_question",
      handoffCount: 1,
      step: null,
      slots: {},
      suspended: { intent: "new_booking", step: "qualify", slots: { name: "Ольга", specialist: "кардиолог" } },
    });
    expect(r.events).toEqual(expect.arrayContaining(["sticky", "handoff"]));
    expect(r.reply).toBe("ОАК — 600 рублей.");
    expect(r.calls).toEqual({ router: 1, branch: 2 });
    expect(r.effects.filter((e) => e.type === "effect.branch").map((e) => e.branch)).toEqual([
      "new_booking",
      "price_question",
    ]);
    expect(r.effects.filter((e) => e.type === "effect.branch")[1]!.system).toContain("ОАК — 600 рублей");
    const back = ok(
      run.turn("Давайте продолжим запись", { router: ["new_booking"], branch: [`Продолжим.${stepTail("qualify")}`] }),
    );
    expect(back.state).toMatchObject({
      activeBranch: "new_booking",
      step: "qualify",
      slots: { name: "Ольга", specialist: "кардиолог" },
      handoffCount: 0,
      suspended: null,
    });
    expect(back.events).toContain("resumed");
    expect(back.events).not.toContain("handoff");
  });

  it("escalation with a reason from the branch signal", () => {
    const run = atQualify("К хирургу", "хирург");
    const r = booking(
      run,
      "Нужна операция под наркозом",
      "[INTENT_CHANGE: escalate_human|surgery]",
      "Передаю администратору.",
    );
    expect(r.state).toMatchObject({ activeBranch: "escalate_human", escalationReason: "surgery", handoffCount: 1 });
    expect(r.events).toEqual(expect.arrayContaining(["handoff", "escalated"]));
    expect(r.reply).toBe("Передаю администратору.");
  });

  it("the loop guard: the fourth switch escalates with routing_loop and the template, without a branch call", () => {
    const run = createRunner(defaultRegistry());
    const codes = ["general_info", "price_question", "general_info", "price_question"];
    codes.forEach((c, i) => {
      const r = ok(run.turn(`вопрос ${i}`, { router: [c], branch: ["ответ"] }));
      expect(r.state).toMatchObject({ activeBranch: c, handoffCount: i });
    });
    const r = ok(run.turn("во сколько открываетесь?", { router: ["general_info"], branch: ["С восьми."] }));
    expect(r.state).toMatchObject({
      activeBranch: "escalate_human",
      escalationReason: "routing_loop",
      handoffCount: 3,
    });
    expect(r.events).toEqual(expect.arrayContaining(["loop_guard", "escalated"]));
    expect(r.reply).toBe(LOOP_GUARD_REPLY);
    expect(r.calls).toEqual({ router: 1, branch: 0 });
    // The thread stays with the human: another topic gets the template again, still without a model call.
    const again = ok(run.turn("а цены?", { router: ["price_question"], branch: ["x"] }));
    expect(again.reply).toBe(LOOP_GUARD_REPLY);
    expect(again.calls.branch).toBe(0);
  });

  it("a chain of INTENT_CHANGE signals inside one turn is bounded", () => {
    const run = createRunner(defaultRegistry());
    ok(run.turn("адрес?", { router: ["general_info"], branch: ["Лесная, 5."] }));
    const r = ok(
      run.turn("?", {
        router: ["general_info"],
        branch: [
          "[INTENT_CHANGE: price_question]",
          "[INTENT_CHANGE: medical_question]",
          "[INTENT_CHANGE: general_info]",
          "never",
        ],
      }),
    );
    expect(r.calls.branch).toBeLessThanOrEqual(3);
    expect(r.state.activeBranch).toBe("escalate_human");
    expect(r.state.escalationReason).toBe("routing_loop");
    expect(r.reply).not.toContain("INTENT_CHANGE");
  });

  it("a malformed tail leaves step and slots as they were", () => {
    const run = atQualify("Запись", "ЛОР");
    const r = booking(
      run,
      "Пётр",
      'Пётр, что беспокоит?\nSTATE_JSON: {"state_after": "present", "slots_updated": {"name": ',
    );
    expect(r.state.step).toBe("qualify");
    expect(r.state.slots).toEqual({ specialist: "ЛОР" });
    expect(r.reply).toBe("Пётр, что беспокоит?");
    expect(r.notes.join()).toMatch(/STATE_JSON malformed/);
  });

  it("a router failure or branch failure aborts the turn with the snapshot untouched", () => {
    const run = createRunner(defaultRegistry());
    ok(run.turn("Запись", { router: ["new_booking"], branch: [`Как вас зовут?${stepTail("qualify")}`] }));
    const before = run.persisted;
    expect(run.turn("Пётр", { router: [{ fail: true }], branch: [] }).ok).toBe(false);
    expect(run.turn("Пётр", { router: ["new_booking"], branch: [{ fail: true }] }).ok).toBe(false);
    expect(run.persisted).toBe(before);
  });

  it("an unintelligible router answer keeps the active branch", () => {
    const run = createRunner(defaultRegistry());
    ok(run.turn("Запись", { router: ["new_booking"], branch: [`Как вас зовут?${stepTail("qualify")}`] }));
    const r = ok(
      run.turn("Пётр", {
        router: ["я думаю, что это запись или цены"],
        branch: [`Пётр, что беспокоит?${stepTail("qualify", { name: "Пётр" })}`],
      }),
    );
    expect(r.state).toMatchObject({ activeBranch: "new_booking", routerDecision: null, slots: { name: "Пётр" } });
    expect(r.events).not.toContain("sticky");
  });
});

describe("clinic dialogue v2 statechart: position, history, failure", () => {
  it("rests in the branch and step between turns; a resume re-enters the booking's step through its history state", () => {
    const run = createRunner(defaultRegistry());
    ok(run.turn("Запишите к ЛОРу", { router: ["new_booking"], branch: [`Как вас зовут?${stepTail("intro", {})}`] }));
    expect(JSON.parse(run.persisted).value).toEqual({
      patient: { new_booking: "intro" },
      turn: "idle",
      handler: "bot",
    });
    ok(
      run.turn("Анна", { router: ["new_booking"], branch: [`Что беспокоит?${stepTail("qualify", { name: "Анна" })}`] }),
    );
    expect(JSON.parse(run.persisted).value).toEqual({
      patient: { new_booking: "qualify" },
      turn: "idle",
      handler: "bot",
    });
    ok(
      run.turn("Сколько стоит?", {
        router: ["price_question"],
        branch: ["[INTENT_CHANGE: price_question]", "2600 ₽."],
      }),
    );
    const away = JSON.parse(run.persisted) as { value: unknown; historyValue: Record<string, { id: string }[]> };
    expect(away.value).toEqual({ patient: "price_question", turn: "idle", handler: "bot" });
    expect(away.historyValue["clinicDialogue.patient.new_booking.H"]).toEqual([
      { id: "clinicDialogue.patient.new_booking.qualify" },
    ]);
    const back = ok(
      run.turn("Продолжим запись", {
        router: ["new_booking"],
        branch: [`Так что беспокоит?${stepTail("qualify", {})}`],
      }),
    );
    expect(back.events).toContain("resumed");
    expect(back.state).toMatchObject({ activeBranch: "new_booking", step: "qualify", slots: { name: "Анна" } });
    expect(JSON.parse(run.persisted).value).toEqual({
      patient: { new_booking: "qualify" },
      turn: "idle",
      handler: "bot",
    });
  });

  it("a model failure is an event: the turn ends in `failed` with clinic.failed, no final", () => {
    const machine = createClinicDialogueMachine(defaultRegistry());
    let [s] = initialTransition(machine);
    [s] = transition(machine, s, { type: "patient.message", text: "Хочу записаться" });
    const [failed, actions] = transition(machine, s, { type: "model.failed", role: "router", message: "timeout" });
    expect(failed.value).toEqual({ patient: "unrouted", turn: "failed", handler: "bot" });
    const emitted = (actions as { type: string; params?: { event: { type: string } } }[])
      .filter((a) => a.type === "xstate.emit")
      .map((a) => a.params!.event);
    expect(emitted).toEqual([{ type: "clinic.failed", role: "router", message: "timeout" }]);
  });

  it("restores a snapshot whose step the settings no longer have at the graph's initial step, dropping the stale history", () => {
    const reg = defaultRegistry();
    const machine = createClinicDialogueMachine(reg);
    const state = {
      ...initialClinicState(),
      activeBranch: "new_booking" as const,
      step: "triage",
      slots: { name: "Анна" },
    };
    const s = machine.resolveState({
      value: { patient: { new_booking: "triage" }, turn: "idle" },
      context: { state, turn: null },
      historyValue: { "clinicDialogue.patient.new_booking.H": [{ id: "clinicDialogue.patient.new_booking.triage" }] },
    } as never);
    expect(s.value).toEqual({ patient: { new_booking: "intro" }, turn: "idle", handler: "bot" });
    expect(s.context.state.step).toBe("intro");
    expect(s.historyValue).toEqual({});
  });
});
