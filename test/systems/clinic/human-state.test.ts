import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createClinicDialogueMachine } from "../../../systems/clinic/dialogue.machine";
import { migrateClinicDialogue } from "../../../systems/clinic/dialogue-restore";
import { defaultRegistry } from "../../../systems/clinic/registry";
import { EMERGENCY_REPLY } from "../../../systems/clinic/templates";
import { createRunner } from "./runner";
import { stepTail } from "../../utils/clinic-api";

/** The human as a state of the clinic dialogue machine (issue 32): the `handler` region, pure. */

const at = "2026-12-05T10:00:00.000Z";

function bookingAtQualify() {
  const run = createRunner(defaultRegistry());
  run.turn("Хочу к ЛОРу", {
    router: ["new_booking"],
    branch: [`Как вас зовут?${stepTail("intro", { specialist: "ЛОР" })}`],
  });
  run.turn("Анна", { router: ["new_booking"], branch: [`Что беспокоит?${stepTail("qualify", { name: "Анна" })}`] });
  return run;
}

describe("the handler region: bot | human", () => {
  it("while a human holds the thread the bot is silent: no router, no branch, a holding reply naming who answers", () => {
    const run = bookingAtQualify();
    expect(run.value.handler).toBe("bot");
    expect(run.operator({ type: "operator.take", operator: "Мария", at })).toBe(true);
    expect(run.value.handler).toBe("human");
    const before = run.state;
    const r = run.turn("Алло, вы тут?", { router: ["general_info"], branch: ["не должен звучать"] });
    if (!r.ok) throw new Error("turn failed");
    expect(r.calls).toEqual({ router: 0, branch: 0 });
    expect(r.events).toEqual(["held_by_operator"]);
    expect(r.reply).toContain("Мария");
    expect(r.state).toEqual(before);
  });

  it("operator messages only while held; another operator cannot take a held thread", () => {
    const run = bookingAtQualify();
    expect(run.operator({ type: "operator.message", operator: "Мария", text: "Здравствуйте", at })).toBe(false);
    expect(run.operator({ type: "operator.release", at })).toBe(false);
    run.operator({ type: "operator.take", operator: "Мария", at });
    expect(run.operator({ type: "operator.take", operator: "Олег", at })).toBe(false);
    expect(run.operator({ type: "operator.message", operator: "Мария", text: "Здравствуйте", at })).toBe(true);
    const human = (JSON.parse(run.persisted) as { context: { human: { replies: number } } }).context.human;
    expect(human.replies).toBe(1);
  });

  it("release after an escalation resumes the suspended booking at its step and slots; the bot goes on there", () => {
    const run = bookingAtQualify();
    run.turn("Позовите человека", {
      router: ["escalate_human"],
      branch: ["[INTENT_CHANGE: escalate_human|explicit_request]", "Передаю администратору."],
    });
    expect(run.state).toMatchObject({
      activeBranch: "escalate_human",
      suspended: { intent: "new_booking", step: "qualify" },
    });
    run.operator({ type: "operator.take", operator: "Мария", at });
    run.operator({ type: "operator.message", operator: "Мария", text: "Анна, записываю вас к ЛОРу.", at });
    expect(run.operator({ type: "operator.release", at })).toBe(true);
    expect(run.value).toMatchObject({ handler: "bot", patient: { new_booking: "qualify" } });
    expect(run.state).toMatchObject({
      activeBranch: "new_booking",
      step: "qualify",
      slots: { specialist: "ЛОР", name: "Анна" },
      suspended: null,
      escalationReason: null,
    });
    let seen = "";
    const r = run.turn("Продолжим", {
      router: () => "new_booking",
      branch: (messages) => ((seen = messages.map((m) => m.content).join("\n")), `Когда удобно?${stepTail("present")}`),
    });
    if (!r.ok) throw new Error("turn failed");
    expect(r.state).toMatchObject({ activeBranch: "new_booking", step: "present" });
    expect(seen).toContain("[Администратор клиники]: Анна, записываю вас к ЛОРу.");
  });

  it("release of a thread taken without an escalation keeps the patient where he was; close from the bot is accepted", () => {
    const run = bookingAtQualify();
    const before = run.state;
    run.operator({ type: "operator.take", operator: "Мария", at });
    expect(run.operator({ type: "operator.release", at })).toBe(true);
    expect(run.state).toEqual(before);
    expect(run.value).toMatchObject({ handler: "bot", patient: { new_booking: "qualify" } });
    expect(run.operator({ type: "operator.close", at })).toBe(true);
  });

  it("a release logged before issue 32 (no `at`) replays as then: to `unrouted`, the booking kept suspended", () => {
    const run = bookingAtQualify();
    run.turn("Позовите человека", {
      router: ["escalate_human"],
      branch: ["[INTENT_CHANGE: escalate_human|explicit_request]", "Передаю."],
    });
    expect(run.operator({ type: "operator.release" })).toBe(true);
    expect(run.state).toMatchObject({ activeBranch: null, suspended: { intent: "new_booking" } });
  });

  it("a red flag while held still gets the emergency reply (no model), and the operator is told", () => {
    const run = bookingAtQualify();
    run.operator({ type: "operator.take", operator: "Мария", at });
    const r = run.turn("Задыхаюсь, не могу дышать", { router: ["general_info"], branch: ["x"] });
    if (!r.ok) throw new Error("turn failed");
    expect(r.reply).toBe(EMERGENCY_REPLY);
    expect(r.calls).toEqual({ router: 0, branch: 0 });
    expect(run.value.handler).toBe("human");
  });

  it("v2 snapshots migrate: with `context.human` (migration 000029) to `human`, else to `bot`", () => {
    const machine = createClinicDialogueMachine(defaultRegistry());
    const run = bookingAtQualify();
    const v2 = JSON.parse(run.persisted) as { value: Record<string, unknown>; context: Record<string, unknown> };
    delete v2.value.handler;
    delete v2.context.human;
    const bot = machine.resolveState(migrateClinicDialogue(structuredClone(v2), 2) as never);
    expect(bot.value).toMatchObject({ handler: "bot" });
    v2.context.human = { operator: "Мария", since: at };
    const human = machine.resolveState(migrateClinicDialogue(v2, 2) as never);
    expect(human.value).toMatchObject({ handler: "human", patient: { new_booking: "qualify" } });
    expect(human.context.human).toEqual({ operator: "Мария", since: at, replies: 0 });
  });
});

describe("invariant over random operator and patient interleavings (fast-check)", () => {
  it("the models are asked exactly when no human holds the thread; the region mirrors the context", () => {
    type Cmd = "take" | "message" | "release" | "close" | "patient";
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Cmd>("take", "message", "release", "close", "patient"), { maxLength: 25 }),
        (cmds) => {
          const run = createRunner(defaultRegistry());
          for (const c of cmds) {
            const held = run.value.handler === "human";
            if (c === "patient") {
              const r = run.turn("Когда вы работаете?", { router: ["general_info"], branch: ["С 8 до 20."] });
              if (!r.ok) throw new Error("turn failed");
              expect(r.calls.router > 0).toBe(!held);
              expect(r.events.includes("held_by_operator")).toBe(held);
            } else if (c === "take") run.operator({ type: "operator.take", operator: "Мария", at });
            else if (c === "message")
              expect(run.operator({ type: "operator.message", operator: "Мария", text: "Да", at })).toBe(held);
            else if (c === "release") run.operator({ type: "operator.release", at });
            else run.operator({ type: "operator.close", at });
            const p = JSON.parse(run.persisted) as { value: { handler: string }; context: { human: unknown } };
            expect(p.value.handler).toBe(p.context.human ? "human" : "bot");
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
