import { describe, expect, it } from "vitest";
import { offlineBranch, offlineRouter } from "../../../systems/clinic/offline";
import { defaultRegistry } from "../../../systems/clinic/registry";
import { createRunner } from "./runner";

const offline = { router: offlineRouter, branch: offlineBranch };

function ok(r: ReturnType<ReturnType<typeof createRunner>["turn"]>) {
  if (!r.ok) throw new Error("turn failed");
  return r;
}

describe("offline responders (npm start without a model)", () => {
  it("walk a whole booking through the six steps, deterministically", () => {
    const run = createRunner(defaultRegistry());
    const steps = [
      "Здравствуйте, хочу записаться к ЛОРу",
      "Алексей",
      "Болит ухо третий день",
      "Да, подходит",
      "Завтра после 17",
      "Да",
    ].map((t) => ok(run.turn(t, offline)).state.step);
    expect(steps).toEqual(["intro", "qualify", "present", "offer_time", "book", "close"]);
    expect(run.state.slots).toMatchObject({ specialist: "ЛОР", name: "Алексей", confirmed: true });
  });

  it("hold a child's booking at the guard until the parent is named, answer a side question, and escalate", () => {
    const run = createRunner(defaultRegistry());
    ok(run.turn("Хочу записать сына к ЛОРу", offline));
    const r2 = ok(run.turn("Миша, болит горло", offline));
    expect(r2.state.step).toBe("qualify");
    const side = ok(run.turn("А сколько стоит приём?", offline));
    expect(side.events).toEqual(expect.arrayContaining(["sticky", "soft_insertion"]));
    const r3 = ok(run.turn("Ирина Петрова, +7 900 000-00-00", offline));
    expect(r3.state.step).toBe("present");
    const esc = ok(run.turn("Позовите оператора!", offline));
    expect(esc.state).toMatchObject({
      activeBranch: "escalate_human",
      escalationReason: "explicit_request",
      suspended: { intent: "new_booking", step: "present" },
    });
  });

  it("route informational questions to general_info and answer from the knowledge base", () => {
    const run = createRunner(defaultRegistry());
    const r = ok(
      run.turn("Какой у вас адрес?", {
        ...offline,
        fragments: [{ docId: "addr", title: "Адрес", text: "Москва, Лесная улица, 5.", score: 1 }],
      }),
    );
    expect(r.state.activeBranch).toBe("general_info");
    expect(r.reply).toContain("Лесная улица, 5");
  });
});
