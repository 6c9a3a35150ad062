// The Russian morphology the answer check reads (az, OpenCorpora): loaded once, synchronously.
import { describe, expect, it } from "vitest";
import { lemmaOf, morphLoadStats, readings } from "../../../systems/workbench/morph";

describe("morphology", () => {
  it("tags aspect, tense, voice, person and mood, and keeps a cut prefix in the lemma", () => {
    const has = (w: string, ...tags: string[]) => readings(w).some((r) => tags.every((t) => r.tags.has(t)));
    expect(has("обновил", "VERB", "perf", "past", "indc")).toBe(true);
    expect(has("сохранены", "PRTS", "pssv")).toBe(true);
    expect(has("обновится", "VERB", "futr")).toBe(true);
    expect(has("нажмите", "VERB", "impr")).toBe(true);
    expect(has("я", "NPRO", "1per")).toBe(true);
    expect(lemmaOf("пересобрал")).toBe("пересобрать");
    const stats = morphLoadStats()!;
    console.log(`az dictionaries: ${stats.ms.toFixed(0)} ms, ${stats.rssMb.toFixed(0)} MB RSS`);
    expect(stats.ms).toBeGreaterThan(0);
  });
});
