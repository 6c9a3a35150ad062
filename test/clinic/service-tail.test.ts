import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTailFilter, holdIndex, parseBranchOutput } from "../../clinic/service-tail";

function streamed(text: string, cuts: number[]): string {
  const f = createTailFilter();
  let out = "";
  let at = 0;
  for (const c of [...cuts.filter((x) => x > 0 && x < text.length)].sort((a, b) => a - b)) {
    out += f.push(text.slice(at, c));
    at = c;
  }
  out += f.push(text.slice(at));
  return out + f.end();
}

describe("parseBranchOutput", () => {
  it("cuts STATE_JSON out and reads step, slots and the soft-insertion flag", () => {
    const p = parseBranchOutput('Первичный приём — 2500 ₽. Как вас зовут?\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {}, "soft_insertion": true}');
    expect(p.visible).toBe("Первичный приём — 2500 ₽. Как вас зовут?");
    expect(p.state).toEqual({ kind: "ok", value: { state_after: "qualify", slots_updated: {}, soft_insertion: true } });
    expect(p.intentChange).toEqual({ kind: "none" });
  });

  it("reads INTENT_CHANGE with and without a reason", () => {
    expect(parseBranchOutput("[INTENT_CHANGE: price_question]").intentChange).toMatchObject({ kind: "ok", intent: "price_question", reason: null });
    expect(parseBranchOutput("[INTENT_CHANGE: escalate_human|surgery]")).toMatchObject({ visible: "", intentChange: { kind: "ok", intent: "escalate_human", reason: "surgery" } });
    expect(parseBranchOutput("[intent_change:escalate_human | angry]").intentChange).toMatchObject({ intent: "escalate_human", reason: "angry" });
    // An unknown reason is kept raw for the debug output but not trusted.
    expect(parseBranchOutput("[INTENT_CHANGE: escalate_human|boredom]").intentChange).toMatchObject({ kind: "ok", reason: null, rawReason: "boredom" });
  });

  it("treats an unknown branch code as a malformed signal, still hidden from the patient", () => {
    const p = parseBranchOutput("Секунду [INTENT_CHANGE: dentist] ещё");
    expect(p.intentChange).toMatchObject({ kind: "malformed" });
    expect(p.visible).toBe("Секунду ещё");
  });

  it("hides a malformed or unterminated STATE_JSON and reports it", () => {
    const p = parseBranchOutput('Хорошо.\nSTATE_JSON: {"state_after": "present", "slots_updated": {"name": ');
    expect(p.visible).toBe("Хорошо.");
    expect(p.state.kind).toBe("malformed");
    const bad = parseBranchOutput('Ок\nSTATE_JSON: {"state_after": 5}');
    expect(bad.state.kind).toBe("malformed");
    expect(bad.visible).toBe("Ок");
  });

  it("handles a fenced tail and braces inside JSON strings", () => {
    const p = parseBranchOutput('Готово!\n```json\nSTATE_JSON: {"state_after": "close", "slots_updated": {"note": "a } b {"}}\n```');
    expect(p.visible).toBe("Готово!");
    expect(p.state).toMatchObject({ kind: "ok", value: { state_after: "close", slots_updated: { note: "a } b {" } } });
  });

  it("leaves ordinary text alone", () => {
    const p = parseBranchOutput("Приём стоит 2500 рублей [без скидки].");
    expect(p).toEqual({ visible: "Приём стоит 2500 рублей [без скидки].", state: { kind: "none" }, intentChange: { kind: "none" } });
  });
});

describe("tail filter for the token stream", () => {
  it("holds back a suffix that could begin a tail", () => {
    expect(holdIndex("Привет ST")).toBe("Привет".length);
    expect(holdIndex("Привет [INT")).toBe("Привет".length);
    expect(holdIndex("Привет [INTENT_CHANGE: pri")).toBe("Привет".length);
    expect(holdIndex("Привет ```js")).toBe("Привет".length);
    expect(holdIndex("Привет, мир")).toBe("Привет, мир".length);
  });

  it("streams the same text the final reply shows, without the tail", () => {
    const text = 'Здравствуйте! Как вас зовут?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {"specialist": "ЛОР"}}';
    expect(streamed(text, [3, 10, 31, 35, 40])).toBe("Здравствуйте! Как вас зовут?");
  });

  it("property: however the model's output is cut into deltas, no tail reaches the stream and the stream equals the reply", () => {
    const visible = fc.array(fc.constantFrom("Здравствуйте", "как", "[вас]", "S", "ST", "STATE", "[", "[INT", "`", "```", "json", "{", "}", "2500", "\n", " "), { maxLength: 12 }).map((w) => w.join(""));
    const tail = fc.oneof(
      fc.constant(""),
      fc.constant('\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {"name": "Ан}на"}}'),
      fc.constant('\n```json\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {}}\n```'),
      fc.constant('STATE_JSON: {"state_after": '),
      fc.constantFrom("[INTENT_CHANGE: price_question]", "[INTENT_CHANGE: escalate_human|surgery]", "[INTENT_CHANGE: nope", "[ INTENT_CHANGE : general_info ]"),
    );
    fc.assert(
      fc.property(visible, tail, visible, fc.array(fc.nat({ max: 200 }), { maxLength: 30 }), (before, t, after, cuts) => {
        const text = before + t + (t.startsWith("[") ? after : "");
        const out = streamed(text, cuts);
        expect(out).not.toMatch(/STATE_JSON|INTENT_CHANGE/i);
        const final = parseBranchOutput(text).visible;
        expect(final).not.toMatch(/STATE_JSON|INTENT_CHANGE/i);
        expect(out).toBe(final);
      }),
      { numRuns: 2000 },
    );
  });
});
