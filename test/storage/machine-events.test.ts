import { describe, expect, it } from "vitest";
import { createConversation } from "../../storage/conversations";
import { appendMachineEvents, listMachineEvents, listMachineEventsAfter } from "../../storage/machine-events";
import { useTestDatabase } from "../utils/db";

/** A turn's machine events are one stored row (migration 000013) while every event keeps its own seq. */
const t = useTestDatabase();

describe("machine event log", () => {
  it("stores a turn's events as one row and lists them one by one, from any seq", async () => {
    const conv = await createConversation(t.db.sql, "default", "test");
    const key = conv.id;
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "xstate.init", input: {} }], null, "m@1");
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "a" }, { type: "b" }, { type: "c" }], "run-1", "m@1");
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "d" }, { type: "e" }], "run-2", "m@2");
    const rows = await t.db.sql<
      { seq: number; first_seq: number | null }[]
    >`select seq, first_seq from machine_events where snapshot_key = ${key} order by seq`;
    expect(rows).toEqual([
      { seq: 1, first_seq: null },
      { seq: 4, first_seq: 2 },
      { seq: 6, first_seq: 5 },
    ]);
    const all = await listMachineEvents(t.db.sql, key);
    expect(all.map((e) => [e.seq, (e.event as { type: string }).type, e.machine, e.runId])).toEqual([
      [1, "xstate.init", "m@1", null],
      [2, "a", "m@1", "run-1"],
      [3, "b", "m@1", "run-1"],
      [4, "c", "m@1", "run-1"],
      [5, "d", "m@2", "run-2"],
      [6, "e", "m@2", "run-2"],
    ]);
    // A follower that stopped inside a turn's row gets the rest of it, then the next turns.
    expect((await listMachineEventsAfter(t.db.sql, key, 2)).map((e) => e.seq)).toEqual([3, 4, 5, 6]);
    expect((await listMachineEventsAfter(t.db.sql, key, 2, 1)).map((e) => e.seq)).toEqual([3, 4]);
    expect(await listMachineEventsAfter(t.db.sql, key, 6)).toEqual([]);
  });

  it("stores a machine label once until it changes, and every event still names its own (migration 000015)", async () => {
    const conv = await createConversation(t.db.sql, "default", "test");
    const key = conv.id;
    for (const [i, label] of ["m@1|s@1", "m@1|s@1", "m@1|s@1", "m@1|s@2", "m@1|s@2", "m@1|s@1"].entries())
      await appendMachineEvents(t.db.sql, key, conv.id, [{ type: `e${i + 1}` }], null, label);
    // A row logged without a label (before labels were recorded) does not count as one.
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "e7" }], null, null);
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "e8" }], null, "m@1|s@1");
    const stored = await t.db.sql<
      { machine: string | null }[]
    >`select machine from machine_events where snapshot_key = ${key} order by seq`;
    expect(stored.map((r) => r.machine)).toEqual(["m@1|s@1", "", "", "m@1|s@2", "", "m@1|s@1", null, ""]);
    const labels = ["m@1|s@1", "m@1|s@1", "m@1|s@1", "m@1|s@2", "m@1|s@2", "m@1|s@1", null, "m@1|s@1"];
    expect((await listMachineEvents(t.db.sql, key)).map((e) => e.machine)).toEqual(labels);
    // From the middle of the log, the label in force before the first row read is found too.
    for (let after = 0; after < 8; after++)
      expect((await listMachineEventsAfter(t.db.sql, key, after, 2)).map((e) => e.machine)).toEqual(
        labels.slice(after, after + 2),
      );
  });
});
