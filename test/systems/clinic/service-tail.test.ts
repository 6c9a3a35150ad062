import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTailFilter, parseBranchOutput } from "../../../systems/clinic/service-tail";

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
    const p = parseBranchOutput(
      'Первичный приём — 2500 ₽. Как вас зовут?\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {}, "soft_insertion": true}',
    );
    expect(p.visible).toBe("Первичный приём — 2500 ₽. Как вас зовут?");
    expect(p.state).toEqual({ kind: "ok", value: { state_after: "qualify", slots_updated: {}, soft_insertion: true } });
    expect(p.intentChange).toEqual({ kind: "none" });
  });

  it("reads INTENT_CHANGE with and without a reason", () => {
    expect(parseBranchOutput("[INTENT_CHANGE: price_question]").intentChange).toMatchObject({
      kind: "ok",
      intent: "price_question",
      reason: null,
    });
    expect(parseBranchOutput("[INTENT_CHANGE: escalate_human|surgery]")).toMatchObject({
      visible: "",
      intentChange: { kind: "ok", intent: "escalate_human", reason: "surgery" },
    });
    expect(parseBranchOutput("[intent_change:escalate_human | angry]").intentChange).toMatchObject({
      intent: "escalate_human",
      reason: "angry",
    });
    // An unknown reason is kept raw for the debug output but not trusted.
    expect(parseBranchOutput("[INTENT_CHANGE: escalate_human|boredom]").intentChange).toMatchObject({
      kind: "ok",
      reason: null,
      rawReason: "boredom",
    });
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
    const p = parseBranchOutput(
      'Готово!\n```json\nSTATE_JSON: {"state_after": "close", "slots_updated": {"note": "a } b {"}}\n```',
    );
    expect(p.visible).toBe("Готово!");
    expect(p.state).toMatchObject({ kind: "ok", value: { state_after: "close", slots_updated: { note: "a } b {" } } });
  });

  it("leaves ordinary text alone", () => {
    const p = parseBranchOutput("Приём стоит 2500 рублей [без скидки].");
    expect(p).toEqual({
      visible: "Приём стоит 2500 рублей [без скидки].",
      state: { kind: "none" },
      intentChange: { kind: "none" },
    });
  });
});

describe("tail filter for the token stream", () => {
  it("holds back only a suffix that could begin a tail, and passes it on when it does not", () => {
    const pushed = (text: string) => createTailFilter().push(text);
    expect(pushed("Привет ST")).toBe("Привет");
    expect(pushed("Привет [INT")).toBe("Привет");
    expect(pushed("Привет [INTENT_CHANGE: pri")).toBe("Привет");
    expect(pushed("Привет ```js")).toBe("Привет");
    expect(pushed('Привет {"inte')).toBe("Привет");
    expect(pushed("Привет\nINTENT_CHA")).toBe("Привет");
    expect(pushed("Привет, мир")).toBe("Привет, мир");
    const f = createTailFilter();
    expect(f.push("Цена ST")).toBe("Цена");
    expect(f.push("OP")).toBe(" STOP");
    expect(f.push(" {да}")).toBe(" {да}");
    expect(f.end()).toBe("");
  });

  it("streams the same text the final reply shows, without the tail", () => {
    const text =
      'Здравствуйте! Как вас зовут?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {"specialist": "ЛОР"}}';
    expect(streamed(text, [3, 10, 31, 35, 40])).toBe("Здравствуйте! Как вас зовут?");
  });

  it("hands over its reading only for the exact text it read", () => {
    const text = 'Как вас зовут?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {}}';
    const f = createTailFilter();
    for (const piece of [text.slice(0, 9), text.slice(9)]) f.push(piece);
    f.end();
    expect(f.readingOf(text)).toEqual(parseBranchOutput(text));
    // A retry streamed leftovers before the answer, or the reply was relabelled: the guards parse it themselves.
    expect(f.readingOf(`Здравствуйте! ${text}`)).toBeNull();
    expect(f.readingOf(text.slice(0, 9))).toBeNull();
  });

  it("property: however the model's output is cut into deltas, no tail reaches the stream and the stream equals the reply", () => {
    const visible = fc
      .array(
        fc.constantFrom(
          "Здравствуйте",
          "как",
          "[вас]",
          "S",
          "ST",
          "STATE",
          "[",
          "[INT",
          "`",
          "```",
          "json",
          "{",
          "}",
          "2500",
          "\n",
          " ",
        ),
        { maxLength: 12 },
      )
      .map((w) => w.join(""));
    const tail = fc.oneof(
      fc.constant(""),
      fc.constant('\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {"name": "Ан}на"}}'),
      fc.constant('\n```json\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {}}\n```'),
      fc.constant('STATE_JSON: {"state_after": '),
      fc.constantFrom(
        "[INTENT_CHANGE: price_question]",
        "[INTENT_CHANGE: escalate_human|surgery]",
        "[INTENT_CHANGE: nope",
        "[ INTENT_CHANGE : general_info ]",
      ),
      fc.constantFrom(
        "[INTENT_CHANGE: escalate_human:angry]",
        "\nINTENT_CHANGE: PRICE_QUESTION\n",
        '{"intent_change": "general_info"}',
        '{ "intent_change": {"intent": "escalate_human", "reason": "angry"} }',
      ),
    );
    fc.assert(
      fc.property(
        visible,
        tail,
        visible,
        fc.array(fc.nat({ max: 200 }), { maxLength: 30 }),
        (before, t, after, cuts) => {
          const text = before + t + (/^[[{\n]/.test(t) ? after : "");
          const out = streamed(text, cuts);
          expect(out).not.toMatch(/STATE_JSON|INTENT_CHANGE/i);
          const final = parseBranchOutput(text).visible;
          expect(final).not.toMatch(/STATE_JSON|INTENT_CHANGE/i);
          expect(out).toBe(final);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("property: the incremental cutter equals the whole-text parse over arbitrary chunkings of arbitrary text", () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.constantFrom(
        "[",
        "]",
        "{",
        "}",
        '"',
        "`",
        "```json",
        "\n",
        " ",
        "S",
        "STATE_JSON",
        "STATE_JSON:",
        "INTENT_CHANGE",
        "INTENT_CHANGE:",
        '"intent_change"',
        "[INTENT_CHANGE",
        "price_question",
        "|",
        ":",
        "angry",
        '{"a": 1}',
        "Привет",
      ),
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 25 }).map((p) => p.join("")),
        fc.array(fc.nat({ max: 120 }), { maxLength: 40 }),
        (text, cuts) => {
          const f = createTailFilter();
          let out = "";
          let at = 0;
          for (const c of [...new Set(cuts.filter((x) => x > 0 && x < text.length))].sort((a, b) => a - b)) {
            out += f.push(text.slice(at, c));
            at = c;
          }
          out += f.push(text.slice(at));
          out += f.end();
          const whole = parseBranchOutput(text);
          expect(out).toBe(whole.visible);
          expect(f.result()).toEqual(whole);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("service signals in the forms models produce", () => {
  const cases: [string, string, string | null][] = [
    ["[INTENT_CHANGE: escalate_human:angry]", "escalate_human", "angry"],
    ["[INTENT_CHANGE: escalate_human|angry]", "escalate_human", "angry"],
    ["[INTENT_CHANGE: ESCALATE_HUMAN | ANGRY]", "escalate_human", "angry"],
    ["[INTENT_CHANGE: escalate_human, reason: surgery]", "escalate_human", "surgery"],
    ["[INTENT_CHANGE: PRICE_QUESTION]", "price_question", null],
    ["INTENT_CHANGE: price_question", "price_question", null],
    ["intent_change: general_info", "general_info", null],
    ['{"intent_change": "price_question"}', "price_question", null],
    ['{"intent_change": "escalate_human", "reason": "acute_pain"}', "escalate_human", "acute_pain"],
    ['```json\n{"intent_change": {"intent": "RESCHEDULE"}}\n```', "reschedule", null],
  ];
  it.each(cases)("%s", (signal, intent, reason) => {
    for (const text of [signal, `Сейчас уточню.\n${signal}`, `Сейчас уточню.\n${signal}\n`]) {
      const p = parseBranchOutput(text);
      expect(p.intentChange).toMatchObject({ kind: "ok", intent, reason });
      expect(p.visible).not.toMatch(/intent_change|escalate|question|general_info|reschedule/i);
      expect(p.visible).toBe(text === signal ? "" : "Сейчас уточню.");
    }
  });

  it("a word that merely contains the marker is text", () => {
    expect(parseBranchOutput("MY_INTENT_CHANGE: нет").visible).toBe("MY_INTENT_CHANGE: нет");
    expect(parseBranchOutput('Код {"intent": 1}').visible).toBe('Код {"intent": 1}');
  });
});

describe("the cutter is linear", () => {
  const run = (total: number, chunk: number, withTail: boolean) => {
    const unit = "Приём у терапевта стоит 2500 рублей, [скидка] {нет} ST. ";
    const body = unit.repeat(Math.ceil(total / unit.length)).slice(0, total);
    const text = withTail ? `${body}\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {}}` : body;
    const f = createTailFilter();
    const t0 = performance.now();
    let out = 0;
    for (let i = 0; i < text.length; i += chunk) out += f.push(text.slice(i, i + chunk)).length;
    out += f.end().length;
    return { ms: performance.now() - t0, out, expected: body.trim().length, state: f.result().state.kind };
  };

  it("1 MB in 64-character chunks finishes fast and streams everything but the tail", () => {
    const r = run(1 << 20, 64, true);
    expect(r.out).toBe(r.expected);
    expect(r.state).toBe("ok");
    expect(r.ms).toBeLessThan(3000);
  });

  it("10 MB in 4 KB chunks and 1 MB in 4-character chunks finish fast", () => {
    const big = run(10 << 20, 4096, false);
    expect(big.out).toBe(big.expected);
    expect(big.ms).toBeLessThan(10000);
    const small = run(1 << 20, 4, true);
    expect(small.out).toBe(small.expected);
    expect(small.ms).toBeLessThan(5000);
  });

  it("a 10 MB tail that never closes is scanned once and stays hidden", () => {
    const f = createTailFilter();
    const t0 = performance.now();
    let out = f.push('Хорошо.\nSTATE_JSON: {"slots_updated": {"x": "');
    const chunk = "a".repeat(64);
    for (let i = 0; i < (10 << 20) / 64; i++) out += f.push(chunk);
    out += f.end();
    expect(out).toBe("Хорошо.");
    expect(f.result().state.kind).toBe("malformed");
    expect(performance.now() - t0).toBeLessThan(10000);
  });
});
