import fc from "fast-check";
import { assign as stockAssign, raise, setup, type AnyMachineSnapshot } from "xstate";
import { describe, expect, it } from "vitest";
import { assign as engineAssign } from "../../driver/assign";
import { pureInitialTransition, pureTransition } from "../../driver/pure";
import { snapshotFields } from "../utils/snapshot-fields";

type Ev =
  { type: "inc"; by: number } | { type: "note"; text: string } | { type: "go" } | { type: "back" } | { type: "bump" };

/**
 * One machine, built twice: with xstate's `assign` and with the engine's. Parallel regions, a
 * nested compound with a history state, tags, eventless and raised transitions, assigns in the
 * function and the object form, with params, several in one transition and in entry actions.
 */
function build(assign: typeof stockAssign) {
  return setup({
    types: {} as { context: { n: number; notes: string[]; seen: number }; events: Ev },
    actions: {
      add: assign({ n: ({ context, event }) => context.n + (event as { by: number }).by }),
      note: assign(({ context, event }) => ({ notes: [...context.notes, (event as { text: string }).text] })),
      see: assign({ seen: ({ context }) => context.seen + 1 }),
      mark: assign(({ context }, p: { tag: string }) => ({ notes: [...context.notes, p.tag] })),
      bumpLater: raise({ type: "bump" }),
    },
    guards: { big: ({ context }) => context.n > 5 },
  }).createMachine({
    type: "parallel",
    context: { n: 0, notes: [], seen: 0 },
    states: {
      a: {
        initial: "low",
        states: {
          low: {
            tags: ["low"],
            always: { guard: "big", target: "high", actions: ["see", { type: "mark", params: { tag: "up" } }] },
          },
          high: { tags: ["high"], entry: "see", on: { inc: { target: "low", actions: ["add", "see"] } } },
        },
        on: {
          inc: { actions: ["add", "see", "bumpLater"] },
          bump: { actions: { type: "mark", params: { tag: "bump" } } },
        },
      },
      b: {
        initial: "one",
        states: {
          one: { on: { go: "two" } },
          two: {
            initial: "x",
            states: { x: { on: { go: "y" } }, y: { tags: ["y"], entry: "see" }, H: { type: "history" } },
            on: { back: { target: "one", actions: "see" } },
          },
        },
        on: { note: { actions: ["note", "see"] }, back: { target: ".two.H" } },
      },
    },
  });
}

const stock = build(stockAssign);
const engine = build(engineAssign);

const fields = (s: AnyMachineSnapshot) => snapshotFields(s);

const event: fc.Arbitrary<Ev> = fc.oneof(
  fc.integer({ min: -3, max: 4 }).map((by) => ({ type: "inc" as const, by })),
  fc.string({ maxLength: 3 }).map((text) => ({ type: "note" as const, text })),
  fc.constant({ type: "go" as const }),
  fc.constant({ type: "back" as const }),
  fc.constant({ type: "bump" as const }),
);

describe("the engine's assign", () => {
  it("makes the snapshots and actions xstate's own assign makes, over any event sequence", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 16 }), (events) => {
        let [mine, mineActions] = pureInitialTransition(engine);
        let [theirs, theirActions] = pureInitialTransition(stock);
        expect(fields(mine)).toEqual(fields(theirs));
        for (const e of events) {
          [mine, mineActions] = pureTransition(engine, mine, e);
          [theirs, theirActions] = pureTransition(stock, theirs, e);
          expect(fields(mine)).toEqual(fields(theirs));
          expect(mine.matches).toBe(theirs.matches);
          expect(engine.getPersistedSnapshot(mine)).toEqual(stock.getPersistedSnapshot(theirs));
          expect(mineActions.map((a) => a.type)).toEqual(theirActions.map((a) => a.type));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps the snapshot it started from unchanged, and refuses to spawn", () => {
    const [s0] = pureInitialTransition(engine);
    const before = fields(s0);
    const [s1] = pureTransition(engine, s0, { type: "note", text: "a" });
    expect(fields(s0)).toEqual(before);
    expect(s1.context.notes).toEqual(["a"]);
    const spawning = setup({}).createMachine({
      context: {},
      on: {
        go: {
          actions: engineAssign(({ spawn }) => {
            (spawn as unknown as (src: string) => unknown)("x");
            return {};
          }),
        },
      },
    });
    const [t0] = pureInitialTransition(spawning);
    expect(() => pureTransition(spawning, t0, { type: "go" })).toThrow(/do not spawn/);
  });
});
