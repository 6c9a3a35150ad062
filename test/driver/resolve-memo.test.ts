import fc from "fast-check";
import { setup, type AnyMachineSnapshot } from "xstate";
import { describe, expect, it } from "vitest";
import { pureInitialTransition, pureTransition } from "../../driver/pure";
import { snapshotFields } from "../utils/snapshot-fields";
import { memoizeResolve } from "../../driver/resolve-memo";

type Ev = { type: "go" } | { type: "back" } | { type: "flip" } | { type: "end" } | { type: "n"; by: number };

/** Parallel regions, nested compounds, a history state, tags, a final state: built twice, one memoized. */
function build() {
  return setup({ types: {} as { context: { n: number }; events: Ev } }).createMachine({
    type: "parallel",
    context: { n: 0 },
    states: {
      a: {
        initial: "one",
        states: {
          one: { tags: ["one"], on: { go: "two", end: "done" } },
          two: {
            initial: "x",
            states: { x: { on: { go: "y" } }, y: { tags: ["y"] }, H: { type: "history" } },
            on: { back: "one", flip: ".x" },
          },
          done: { type: "final" },
        },
        on: { n: { actions: () => {} } },
      },
      b: {
        initial: "p",
        states: { p: { on: { flip: "q" } }, q: { tags: ["q"], on: { flip: "p", back: "#m.a.two.H" } } },
      },
    },
    id: "m",
  });
}

const stock = build();
const memo = build();
memoizeResolve(memo);

const fields = (s: AnyMachineSnapshot) => snapshotFields(s, { valueOrder: true });

const event: fc.Arbitrary<Ev> = fc.oneof(
  fc.constantFrom<Ev>({ type: "go" }, { type: "back" }, { type: "flip" }, { type: "end" }),
  fc.integer().map((by) => ({ type: "n" as const, by })),
);

describe("resolveState with each value's state nodes worked out once", () => {
  it("restores every persisted snapshot as stock resolveState does, field for field and in order", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 12 }), fc.integer(), (events, n) => {
        let [s] = pureInitialTransition(stock);
        for (const e of events) {
          [s] = pureTransition(stock, s, e);
          const persisted = JSON.parse(JSON.stringify(stock.getPersistedSnapshot(s)));
          persisted.context = { n };
          // Twice: the first restore of a value fills the memo, the second reads it.
          for (let i = 0; i < 2; i++) {
            const theirs = stock.resolveState(persisted);
            const mine = memo.resolveState(JSON.parse(JSON.stringify(persisted)));
            expect(fields(mine)).toEqual(fields(theirs));
            expect(mine.context).toEqual({ n });
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it("gives each snapshot its own value, tags and nodes, and refuses a value the machine lacks", () => {
    const p = JSON.parse(JSON.stringify(stock.getPersistedSnapshot(pureInitialTransition(stock)[0])));
    const one = memo.resolveState(p);
    const two = memo.resolveState(p);
    expect(one.value).not.toBe(two.value);
    expect(one.tags).not.toBe(two.tags);
    expect(one._nodes).not.toBe(two._nodes);
    expect(() => memo.resolveState({ ...p, value: { a: "nowhere", b: "p" } })).toThrow();
    expect(() => memo.resolveState({ ...p, value: { a: "nowhere", b: "p" } })).toThrow();
  });
});
