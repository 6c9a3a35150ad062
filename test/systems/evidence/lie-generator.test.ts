// The closed-world answer contract against generated lies (issue 31): true answers composed from
// demo worlds pass and render; every mutation kind is refused — by the stream gate (no sentence
// with the lie is released) and by the whole-answer check. The table is printed for doc/evidence.md.
// Since the claims menu (issue 42) the model writes no prose: the only text of its own it can add is
// the choice's opening or closing line, so every generated lie, line by line, is also put there —
// and is dropped, never shown. The slot check itself remains for logged answers that replay.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidatedStream } from "../../../driver/validated-stream";
import { checkAnswer, createClaimChecker } from "../../../systems/evidence/claim-check";
import { packageOf, resolveChoice } from "../../../systems/evidence/answer-choice";
import { composeMenu } from "../../../systems/evidence/compose";
import { MUTATION_KINDS, mutate, trueAnswer, type MutationKind } from "./lies";
import { WORLDS, type World } from "./worlds";

const PER_KIND = 2000;
const checker = (w: World) =>
  createClaimChecker({
    bundle: w.bundle,
    coverage: w.coverage,
    outcome: w.coverage.outcome,
    frame: null,
    draft: w.draft,
  });

/** The answer streamed through the gate in uneven chunks, as a model streams it. */
function streamed(w: World, text: string) {
  let shown = "";
  const gate = new ValidatedStream(checker(w), (d) => (shown += d));
  for (let i = 0; i < text.length; i += 7) gate.push(text.slice(i, i + 7));
  return { ...gate.end(), shown };
}

describe("closed-world answers: the lie generator", () => {
  it("passes and renders every generated true answer (0 false refusals)", () => {
    let n = 0;
    for (const w of WORLDS)
      for (const lines of fc.sample(trueAnswer(w), { numRuns: PER_KIND / 4, seed: 31 })) {
        const text = lines.join("\n");
        const v = checkAnswer(text, checker(w));
        expect(v.issues, `${w.name}: ${text}`).toEqual([]);
        expect(v.rendered).not.toMatch(/[{}]/);
        const g = streamed(w, text);
        expect(g.ok).toBe(true);
        expect(g.shown).toBe(v.rendered);
        n++;
      }
    console.log(`true answers: ${n}, refused: 0`);
  });

  it(`refuses each mutation kind in ≥ 99.5 % of ${PER_KIND} generated cases`, () => {
    const table: { kind: MutationKind; cases: number; refused: number; rate: string }[] = [];
    for (const kind of MUTATION_KINDS) {
      let refused = 0;
      let cases = 0;
      const escaped: string[] = [];
      WORLDS.forEach((w, i) => {
        const prev = WORLDS[(i + 1) % WORLDS.length]!;
        for (const text of fc.sample(mutate(w, prev, kind), { numRuns: PER_KIND / WORLDS.length, seed: 7 + i })) {
          cases++;
          const whole = checkAnswer(text, checker(w));
          const g = streamed(w, text);
          // the stream never shows a raw slot, and refuses what the whole check refuses
          expect(g.shown).not.toMatch(/[{}]/);
          if (!whole.ok && !g.ok) refused++;
          else if (escaped.length < 3) escaped.push(text);
        }
      });
      table.push({ kind, cases, refused, rate: `${((100 * refused) / cases).toFixed(2)} %` });
      expect(refused / cases, `${kind} escaped:\n${escaped.join("\n---\n")}`).toBeGreaterThanOrEqual(0.995);
      expect(cases).toBeGreaterThanOrEqual(PER_KIND);
    }
    console.table(table);
    // 20,000 cases through the stream gate and the whole check: ~25 s alone, longer beside other files.
  }, 180_000);

  it("drops every generated lie, line by line, put in the free text of a choice over the claims menu", () => {
    let cases = 0;
    WORLDS.forEach((w, i) => {
      const menu = composeMenu({ ...w.input, question: "" });
      const engine = packageOf(resolveChoice(menu, { ...menu.engine }), null, "model").user_facing_answer;
      const prev = WORLDS[(i + 1) % WORLDS.length]!;
      for (const kind of MUTATION_KINDS)
        for (const text of fc.sample(mutate(w, prev, kind), { numRuns: 25, seed: 11 + i }))
          for (const line of text
            .split("\n")
            .filter((l) => l.trim() && !w.draft.user_facing_answer.includes(l.trim()))) {
            const r = resolveChoice(menu, { ...menu.engine, opening: line, closing: line });
            expect(r.opening, line).toBeNull();
            expect(r.closing, line).toBeNull();
            expect(packageOf(r, null, "model").user_facing_answer).toBe(engine);
            cases++;
          }
    });
    expect(cases).toBeGreaterThan(1000);
    console.log(`lines of generated lies put in free text: ${cases}, shown: 0`);
  });
});
