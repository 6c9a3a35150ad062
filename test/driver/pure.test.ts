import fc from "fast-check";
import { initialTransition, transition } from "xstate";
import { describe, expect, it } from "vitest";
import { pureInitialTransition, pureTransition } from "../../driver/pure";
import { counterMachine } from "../utils/counter-machine";

type Ev = Parameters<typeof transition<typeof counterMachine>>[2];
const event: fc.Arbitrary<Ev> = fc.oneof(
  fc.string().map((text) => ({ type: "user.message" as const, text })),
  fc.string().map((text) => ({ type: "model.replied" as const, text })),
  fc.constant({ type: "model.failed" as const, message: "x" }),
);
const shape = (actions: { type: string; params?: unknown }[]) =>
  actions.map((a) => ({ type: a.type, params: a.params }));

describe("pure transitions with a cached inert scope", () => {
  it("give the snapshots and actions xstate's own transition() gives, over any event sequence", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 12 }), (events) => {
        let [mine, mineActions] = pureInitialTransition(counterMachine);
        let [theirs, theirActions] = initialTransition(counterMachine);
        expect(shape(mineActions)).toEqual(shape(theirActions));
        for (const e of events) {
          [mine, mineActions] = pureTransition(counterMachine, mine, e);
          [theirs, theirActions] = transition(counterMachine, theirs, e);
          expect(counterMachine.getPersistedSnapshot(mine)).toEqual(counterMachine.getPersistedSnapshot(theirs));
          expect(shape(mineActions)).toEqual(shape(theirActions));
        }
      }),
      { numRuns: 200 },
    );
  });

  it("keeps each call's actions apart (one call's actions never leak into the next)", () => {
    const [s0] = pureInitialTransition(counterMachine);
    const [s1, a1] = pureTransition(counterMachine, s0, { type: "user.message", text: "a" });
    const [, a2] = pureTransition(counterMachine, s1, { type: "model.replied", text: "b" });
    expect(a1.filter((a) => a.type === "xstate.emit")).toHaveLength(1);
    expect(a2.filter((a) => a.type === "xstate.emit")).toHaveLength(0);
  });
});
