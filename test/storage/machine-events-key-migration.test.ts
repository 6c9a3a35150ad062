import { describe, expect, it } from "vitest";
import { appendMachineEvents, listMachineEvents, listMachineEventsAfter } from "../../storage/machine-events";
import { runMigrations } from "../../storage/migrate";
import { JSON_OID } from "../../storage/runs";
import { fixedUuid } from "../utils/ids";
import { migrateBefore, useTestDatabase } from "../utils/db";

/**
 * Migration 000026 stores the conversation's own snapshot key as '' and keys machine_events by
 * (conversation_id, snapshot_key, seq), on a database that already holds logs: every log lists
 * back as it was, a later turn continues its seqs and its label, and the Workbench's keys stay.
 */
const handle = useTestDatabase({ migrate: false });

const conv = "01a24146-7fbd-7fe0-9e1e-d04585ee1efb";
const other = "01a24146-7fbd-7fe0-9e1e-d04585ee1efc";
const wb = "interaction:01a24146-7fbe-7000-8000-0000000000aa";
const RUN = fixedUuid(1);

describe("migration 000026: machine_events keyed by conversation, its own key stored once", () => {
  it("converts stored logs in place", async () => {
    const sql = handle.db.sql;
    // Everything before 000026, then logs stored the old way.
    await migrateBefore(sql, 26);
    for (const id of [conv, other])
      await sql`insert into conversations (id, tenant_id, kind) values (${id}, 't', 'clinic')`;
    // Two conversations' own logs with the same seqs (they collide once both are ''), a batch row,
    // a label stored once (''), and a Workbench log on the first conversation.
    const old = [
      [conv, 1, null, { type: "xstate.init", input: {} }, null, "m@1|s@1"],
      [conv, 3, 2, [{ type: "a" }, { type: "b" }], RUN, ""],
      [other, 1, null, { type: "xstate.init", input: { o: 1 } }, null, "m@1|s@1"],
      [other, 2, null, { type: "o" }, RUN, ""],
      [wb, 1, null, { type: "xstate.init", input: { wb: true } }, null, "interaction@2"],
    ] as const;
    for (const [key, seq, first, event, run, machine] of old)
      await sql`insert into machine_events (snapshot_key, seq, first_seq, conversation_id, event, run_id, machine)
        values (${key}, ${seq}, ${first}, ${key === other ? other : conv}, ${sql.typed(event as never, JSON_OID)}, ${run}, ${machine})`;

    expect(await runMigrations(sql)).toEqual(expect.arrayContaining(["000026_machine_events_key_once.sql"]));

    const rows = await sql<{ c: string; k: string; seq: number }[]>`
      select conversation_id as c, snapshot_key as k, seq from machine_events order by conversation_id, snapshot_key, seq`;
    expect(rows.map((r) => [r.c, r.k, r.seq])).toEqual([
      [conv, "", 1],
      [conv, "", 3],
      [conv, wb, 1],
      [other, "", 1],
      [other, "", 2],
    ]);
    const indexes = await sql<{ name: string; def: string }[]>`
      select indexname as name, indexdef as def from pg_indexes where tablename = 'machine_events' order by 1`;
    expect(indexes.map((i) => [i.name, i.def.replace(/^.* USING btree /, "")])).toEqual([
      ["machine_events_labels", "(conversation_id, snapshot_key, seq) WHERE (machine <> ''::text)"],
      ["machine_events_pkey", "(conversation_id, snapshot_key, seq)"],
    ]);

    // The same events, labels and runs as were stored.
    const listed = async (key: string, conversationId: string) =>
      (await listMachineEvents(sql, key, conversationId)).map((e) => [e.seq, e.event, e.machine, e.runId]);
    expect(await listed(conv, conv)).toEqual([
      [1, { type: "xstate.init", input: {} }, "m@1|s@1", null],
      [2, { type: "a" }, "m@1|s@1", RUN],
      [3, { type: "b" }, "m@1|s@1", RUN],
    ]);
    expect(await listed(other, other)).toEqual([
      [1, { type: "xstate.init", input: { o: 1 } }, "m@1|s@1", null],
      [2, { type: "o" }, "m@1|s@1", RUN],
    ]);
    expect(await listed(wb, conv)).toEqual([[1, { type: "xstate.init", input: { wb: true } }, "interaction@2", null]]);

    // A later turn continues the converted log: the next seq, the label found as unchanged.
    await appendMachineEvents(sql, conv, conv, [{ type: "c" }], RUN, "m@1|s@1");
    await appendMachineEvents(sql, wb, conv, [{ type: "w" }], RUN, "interaction@2");
    const after = await sql<{ k: string; seq: number; machine: string }[]>`
      select snapshot_key as k, seq, machine from machine_events where conversation_id = ${conv} order by snapshot_key, seq`;
    expect(after.map((r) => [r.k, r.seq, r.machine])).toEqual([
      ["", 1, "m@1|s@1"],
      ["", 3, ""],
      ["", 4, ""],
      [wb, 1, "interaction@2"],
      [wb, 2, ""],
    ]);
    expect((await listMachineEventsAfter(sql, conv, conv, 3)).map((e) => [e.seq, e.event, e.machine])).toEqual([
      [4, { type: "c" }, "m@1|s@1"],
    ]);

    // Erasing a conversation still takes its rows (the cascade finds them by the new key) and only its.
    await sql`delete from conversations where id = ${conv}`;
    expect((await sql`select conversation_id from machine_events`).map((r) => r.conversation_id)).toEqual([
      other,
      other,
    ]);
  });
});
