import { describe, expect, it } from "vitest";
import { blockedGuards, isFilled, mergeSlots } from "../../../systems/clinic/guards";
import { seedBookingSteps } from "../../../systems/clinic/seed-booking-steps";
import { StepGraph } from "../../../systems/clinic/types";
import { createStepMachine, proposeStep } from "../../../systems/clinic/booking-steps.machine";

const g = seedBookingSteps;

describe("step machine generated from configuration", () => {
  it("has one state per configured step and one transition per allowed_next entry", () => {
    const m = createStepMachine(g);
    expect(Object.keys(m.root.states)).toEqual(["intro", "qualify", "present", "offer_time", "book", "close"]);
    for (const spec of g.steps) {
      const targets = m.root.states[spec.code]!.transitions.get("step.propose")!.flatMap((t) =>
        (t.target ?? []).map((n) => n.key),
      );
      expect(new Set(targets)).toEqual(new Set(spec.allowed_next.filter((n) => n !== spec.code)));
    }
  });

  it("moves along allowed_next, rejects a skip, stays on the same step", () => {
    expect(proposeStep(g, "intro", {}, "qualify", { name: "А" })).toMatchObject({
      step: "qualify",
      slots: { name: "А" },
      outcome: { kind: "moved" },
    });
    expect(proposeStep(g, "intro", {}, "book", {})).toMatchObject({
      step: "intro",
      outcome: { kind: "rejected", target: "book" },
    });
    expect(proposeStep(g, "qualify", {}, "close", {})).toMatchObject({
      step: "qualify",
      outcome: { kind: "rejected" },
    });
    expect(proposeStep(g, "offer_time", {}, "offer_time", { preferred_time: "завтра" })).toMatchObject({
      step: "offer_time",
      outcome: { kind: "stayed" },
    });
    expect(proposeStep(g, "present", {}, "nowhere", {}).outcome.kind).toBe("rejected");
  });

  it("require_legal_rep blocks qualify → present for a child until both slots are filled, judged on the merged slots", () => {
    const child = { is_child: true, name: "Миша" };
    expect(proposeStep(g, "qualify", child, "present", {})).toMatchObject({
      step: "qualify",
      outcome: {
        kind: "guard_blocked",
        guards: [{ name: "require_legal_rep", missing: ["legal_rep_name", "legal_rep_phone"] }],
      },
    });
    expect(proposeStep(g, "qualify", child, "present", { legal_rep_name: "Ирина" }).outcome).toMatchObject({
      kind: "guard_blocked",
      guards: [{ missing: ["legal_rep_phone"] }],
    });
    expect(
      proposeStep(g, "qualify", child, "present", { legal_rep_name: "Ирина", legal_rep_phone: "+7 900" }).step,
    ).toBe("present");
    expect(proposeStep(g, "qualify", { is_child: false }, "present", {}).step).toBe("present");
    // Blank text is not a filled slot.
    expect(proposeStep(g, "qualify", child, "present", { legal_rep_name: "  ", legal_rep_phone: "+7" }).step).toBe(
      "qualify",
    );
  });

  it("a different configuration gives a different machine: new steps, new edges, an always-active guard", () => {
    const custom = StepGraph.parse({
      branch: "reschedule",
      steps: [
        {
          code: "find",
          prompt: "Найди запись",
          allowed_next: ["find", "pick"],
          guards: { need_id: { required_slots: ["booking_id"] } },
        },
        { code: "pick", prompt: "Выбери время", allowed_next: ["pick", "find", "done"] },
        { code: "done", prompt: "Готово", allowed_next: ["done"] },
      ],
    });
    const m = createStepMachine(custom);
    expect(Object.keys(m.root.states)).toEqual(["find", "pick", "done"]);
    expect(proposeStep(custom, "find", {}, "pick", {})).toMatchObject({
      step: "find",
      outcome: { kind: "guard_blocked", guards: [{ name: "need_id" }] },
    });
    expect(proposeStep(custom, "find", {}, "pick", { booking_id: "42" }).step).toBe("pick");
    expect(proposeStep(custom, "pick", {}, "find", {}).step).toBe("find");
    expect(proposeStep(custom, "find", {}, "done", { booking_id: "42" }).outcome.kind).toBe("rejected");
  });

  it("refuses a configuration whose allowed_next names a missing step", () => {
    expect(
      StepGraph.safeParse({ branch: "new_booking", steps: [{ code: "a", prompt: "", allowed_next: ["b"] }] }).success,
    ).toBe(false);
    expect(
      StepGraph.safeParse({ branch: "new_booking", initial: "z", steps: [{ code: "a", prompt: "", allowed_next: [] }] })
        .success,
    ).toBe(false);
  });
});

describe("guards and slots", () => {
  it("isFilled / mergeSlots / trigger without a value", () => {
    expect([null, undefined, "", "  "].map(isFilled)).toEqual([false, false, false, false]);
    expect([false, 0, "x", {}].map(isFilled)).toEqual([true, true, true, true]);
    expect(mergeSlots({ a: 1, b: 2 }, { b: null, c: 3 })).toEqual({ a: 1, c: 3 });
    const step = {
      code: "s",
      title: "",
      prompt: "",
      question: "",
      allowed_next: [],
      guards: { g: { description: "", trigger_slot: "t", required_slots: ["r"] } },
    };
    expect(blockedGuards(step, {})).toEqual([]);
    expect(blockedGuards(step, { t: "yes" })).toEqual([{ name: "g", description: "", missing: ["r"] }]);
  });
});
