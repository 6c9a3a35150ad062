import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createConversation } from "../../../storage/conversations";
import { expand } from "../../../storage/meta-defaults";
import { appendMessages, listMessages } from "../../../storage/messages";
import type { DialogueEmitted } from "../../../systems/clinic/dialogue.machine";
import { assistantMeta, CLINIC_STATE, clinicMessagesMeta } from "../../../systems/clinic/message-meta";
import { branchCodes, escalationReasons, initialClinicState, type ClinicState } from "../../../systems/clinic/types";
import { useTestDatabase } from "../../utils/db";

const t = useTestDatabase();

type Final = Extract<DialogueEmitted, { type: "clinic.final" }>;
const finalOf = (state: ClinicState): Final => ({
  type: "clinic.final",
  reply: "Ответ.",
  state,
  events: [],
  withHuman: false,
  notes: [],
  fragments: [],
});

const booking: ClinicState = {
  ...initialClinicState(),
  activeBranch: "new_booking",
  routerDecision: "new_booking",
  step: "close",
  slots: { name: "Ольга", specialist: "ЛОР" },
};
const handedOff: ClinicState = {
  ...booking,
  activeBranch: "price_question",
  routerDecision: "price_question",
  step: null,
  slots: {},
  handoffCount: 1,
  suspended: { intent: "new_booking", step: "close", slots: { name: "Ольга" } },
};

/** Any thread state, its keys in ClinicState's order (as the machine keeps it). */
const branch = fc.constantFrom(null, ...branchCodes);
const clinicState: fc.Arbitrary<ClinicState> = fc.record({
  activeBranch: branch,
  routerDecision: branch,
  step: fc.constantFrom(null, "intro", "close"),
  slots: fc.constantFrom({}, { name: "Ольга" }),
  handoffCount: fc.constantFrom(0, 1, 3),
  softInsertionCount: fc.constantFrom(0, 2),
  suspended: fc.constantFrom(null, { intent: "new_booking" as const, step: "intro", slots: {} }),
  escalationReason: fc.constantFrom(null, ...escalationReasons),
});

describe("clinic message meta (systems/clinic/message-meta.ts)", () => {
  it("the template is the initial thread state, and never changes: stored finals and states rely on it", () => {
    const fields = Object.fromEntries(CLINIC_STATE.keys.map((k) => [k, JSON.parse(CLINIC_STATE.defaults.get(k)!)]));
    // Editing the template changes how rows already stored read back: a new state shape registers a new name.
    expect(JSON.stringify(fields)).toBe(
      '{"activeBranch":null,"routerDecision":null,"step":null,"slots":{},"handoffCount":0,"softInsertionCount":0,"suspended":null,"escalationReason":null}',
    );
    // Each default is the field's initial value (a state that gains a field still reads back: the property below).
    const initial = initialClinicState() as Record<string, unknown>;
    for (const [k, v] of Object.entries(fields)) expect(JSON.stringify(initial[k])).toBe(JSON.stringify(v));
  });

  it("a reply's state is stored without the fields that hold their initial values, and reads back as the same text", () => {
    const m = assistantMeta(finalOf(booking), "a@1", null);
    expect(m.meta).toEqual({
      state: { activeBranch: "new_booking", routerDecision: "new_booking", step: "close", slots: booking.slots },
      settings: "a@1",
    });
    expect(m.compact).toEqual({ state: CLINIC_STATE.name });
    expect(JSON.stringify(expand(CLINIC_STATE, m.meta.state))).toBe(JSON.stringify(booking));
    const h = assistantMeta(finalOf(handedOff), "a@1", "a@1");
    expect(h.meta.state).toEqual({
      activeBranch: "price_question",
      routerDecision: "price_question",
      handoffCount: 1,
      suspended: handedOff.suspended,
    });
    expect(JSON.stringify(expand(CLINIC_STATE, h.meta.state))).toBe(JSON.stringify(handedOff));
    // A state that gained a field the template does not know (after the others) is still stored compact.
    const grown = { ...booking, visits: 2 };
    const g = assistantMeta(finalOf(grown as ClinicState), "a@1", "a@1");
    expect(JSON.stringify(g.meta.state)).toBe(
      JSON.stringify({
        activeBranch: "new_booking",
        routerDecision: "new_booking",
        step: "close",
        slots: booking.slots,
        visits: 2,
      }),
    );
    expect(JSON.stringify(expand(CLINIC_STATE, g.meta.state))).toBe(JSON.stringify(grown));
  });

  it("property: every thread state is stored compact when one field holds its initial value, and reads back the same", () => {
    fc.assert(
      fc.property(clinicState, (state) => {
        const { meta, compact } = assistantMeta(finalOf(state), "a@1", null);
        const anyInitial = CLINIC_STATE.keys.some(
          (k) => JSON.stringify(state[k as keyof ClinicState]) === CLINIC_STATE.defaults.get(k),
        );
        expect(compact).toEqual(anyInitial ? { state: CLINIC_STATE.name } : {});
        expect(JSON.stringify(expand(CLINIC_STATE, meta.state))).toBe(JSON.stringify(state));
        expect(JSON.stringify(meta.state).length).toBeLessThanOrEqual(JSON.stringify(state).length);
      }),
    );
  });

  it("the thread's views show every state whole: stored compact, or whole before compaction", async () => {
    const conv = await createConversation(t.db.sql, "default", "clinic");
    const whole = { state: booking, events: [], settings: "a@1" };
    await appendMessages(t.db.sql, conv.id, [
      { role: "user", text: "Запишите" },
      { role: "assistant", text: "Записала.", meta: whole },
      { role: "user", text: "Сколько стоит?" },
      { role: "assistant", text: "600 ₽.", meta: assistantMeta(finalOf(handedOff), "a@1", "a@1").meta },
      { role: "assistant", text: "Ещё.", meta: assistantMeta(finalOf(booking), "a@1", "a@1").meta },
    ]);
    const stored = await listMessages(t.db.sql, conv.id);
    // As stored: the later replies without the fields that hold their initial values.
    expect(JSON.stringify(stored[3]!.meta)).not.toContain("softInsertionCount");
    expect(JSON.stringify(stored[4]!.meta)).not.toContain("handoffCount");
    const shown = await clinicMessagesMeta(t.db.sql, conv.id, stored);
    const flat = (s: ClinicState) => JSON.stringify({ ...s, events: [], fragments: [], settings: "a@1" });
    expect(JSON.stringify(shown[1])).toBe(flat(booking));
    expect(JSON.stringify(shown[3])).toBe(flat(handedOff));
    expect(JSON.stringify(shown[4])).toBe(flat(booking));
    expect(shown[0]).toEqual({});
  });
});
