import { describe, expect, it } from "vitest";
import { createConversation } from "../../storage/conversations";
import {
  appendMachineEvents,
  listMachineEvents,
  listMachineEventsAfter,
  MESSAGE_REF,
  storedKey,
} from "../../storage/machine-events";
import { appendMessages } from "../../storage/messages";
import { fixedUuid } from "../utils/ids";
import { useTestDatabase } from "../utils/db";

/** Run ids are UUIDs (migration 000023). */
const RUN0 = fixedUuid(0);
const RUN1 = fixedUuid(1);
const RUN2 = fixedUuid(2);
const RUN9 = fixedUuid(9);

/** A turn's machine events are one stored row (migration 000013) while every event keeps its own seq. */
const t = useTestDatabase();

describe("machine event log", () => {
  it("stores a turn's events as one row and lists them one by one, from any seq", async () => {
    const conv = await createConversation(t.db.sql, "default", "test");
    const key = conv.id;
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "xstate.init", input: {} }], null, "m@1");
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "a" }, { type: "b" }, { type: "c" }], RUN1, "m@1");
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "d" }, { type: "e" }], RUN2, "m@2");
    const rows = await t.db.sql<
      { seq: number; first_seq: number | null }[]
    >`select seq, first_seq from machine_events where conversation_id = ${conv.id} order by seq`;
    expect(rows).toEqual([
      { seq: 1, first_seq: null },
      { seq: 4, first_seq: 2 },
      { seq: 6, first_seq: 5 },
    ]);
    const all = await listMachineEvents(t.db.sql, key, conv.id);
    expect(all.map((e) => [e.seq, (e.event as { type: string }).type, e.machine, e.runId])).toEqual([
      [1, "xstate.init", "m@1", null],
      [2, "a", "m@1", RUN1],
      [3, "b", "m@1", RUN1],
      [4, "c", "m@1", RUN1],
      [5, "d", "m@2", RUN2],
      [6, "e", "m@2", RUN2],
    ]);
    // A follower that stopped inside a turn's row gets the rest of it, then the next turns.
    expect((await listMachineEventsAfter(t.db.sql, key, conv.id, 2)).map((e) => e.seq)).toEqual([3, 4, 5, 6]);
    expect((await listMachineEventsAfter(t.db.sql, key, conv.id, 2, 1)).map((e) => e.seq)).toEqual([3, 4]);
    expect(await listMachineEventsAfter(t.db.sql, key, conv.id, 6)).toEqual([]);
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
    >`select machine from machine_events where conversation_id = ${conv.id} order by seq`;
    expect(stored.map((r) => r.machine)).toEqual(["m@1|s@1", "", "", "m@1|s@2", "", "m@1|s@1", null, ""]);
    const labels = ["m@1|s@1", "m@1|s@1", "m@1|s@1", "m@1|s@2", "m@1|s@2", "m@1|s@1", null, "m@1|s@1"];
    expect((await listMachineEvents(t.db.sql, key, conv.id)).map((e) => e.machine)).toEqual(labels);
    // From the middle of the log, the label in force before the first row read is found too.
    for (let after = 0; after < 8; after++)
      expect((await listMachineEventsAfter(t.db.sql, key, conv.id, after, 2)).map((e) => e.machine)).toEqual(
        labels.slice(after, after + 2),
      );
  });

  it("stores the texts of the run's messages once: its events refer to them and list back as they were given", async () => {
    const conv = await createConversation(t.db.sql, "default", "test");
    const key = conv.id;
    const patient = "Здравствуйте, сколько стоит первичный приём терапевта?";
    const reply = "Первичный приём терапевта стоит 2 500 ₽, длится 30 минут.";
    const given = [
      { type: "patient.message", text: patient },
      { type: "router.result", text: "price_question" },
      // The model's raw text: the reply, then a service tail the reply does not show.
      { type: "branch.result", text: `${reply}\nSTATE_JSON: {"step":"qualify"}`, call: 1 },
      { type: "other", note: reply, short: "да" },
    ];
    await appendMessages(t.db.sql, conv.id, [{ role: "user", text: "старое" }], RUN0);
    await appendMachineEvents(t.db.sql, key, conv.id, [{ type: "solo", text: patient }], RUN1, "m@1", {
      user: patient,
    });
    await appendMachineEvents(t.db.sql, key, conv.id, given, RUN1, "m@1", { user: patient, assistant: reply });
    await appendMessages(
      t.db.sql,
      conv.id,
      [
        { role: "user", text: patient },
        { role: "assistant", text: reply },
      ],
      RUN1,
    );
    const stored = await t.db.sql<{ event: string }[]>`
      select event::text as event from machine_events where conversation_id = ${conv.id} order by seq`;
    // Each text is stored once, in its message: the log holds references in its place.
    for (const r of stored) {
      expect(r.event).not.toContain(patient);
      expect(r.event).not.toContain(reply);
      expect(r.event).toContain(MESSAGE_REF);
    }
    expect(stored[1]!.event).toContain("STATE_JSON");
    // A short text stays as it is (price_question, да).
    expect(stored[1]!.event).toContain("price_question");
    const all = await listMachineEvents(t.db.sql, key, conv.id);
    expect(all.map((e) => e.event)).toEqual([{ type: "solo", text: patient }, ...given]);
    // Keys keep their order (an inspector shows them as given).
    expect(JSON.stringify(all[3]!.event)).toBe(JSON.stringify(given[2]));
    expect((await listMachineEventsAfter(t.db.sql, key, conv.id, 3)).map((e) => e.event)).toEqual(given.slice(2));
    // Without the run's message the log cannot be read back: an error, not a silently different event.
    await t.db.sql`delete from messages where conversation_id = ${conv.id} and run_id = ${RUN1} and role = 'assistant'`;
    await expect(listMachineEvents(t.db.sql, key, conv.id)).rejects.toThrow(/assistant message is missing/);
  });

  it("keeps events as given when the run's messages are not known, or there is no run", async () => {
    const conv = await createConversation(t.db.sql, "default", "test");
    const text = "Текст длиннее двадцати четырёх символов, но без сообщения.";
    await appendMachineEvents(t.db.sql, conv.id, conv.id, [{ type: "a", text }], null, "m@1", { user: text });
    await appendMachineEvents(t.db.sql, conv.id, conv.id, [{ type: "b", text }], RUN9, "m@1");
    const stored = await t.db.sql<{ event: string }[]>`
      select event::text as event from machine_events where conversation_id = ${conv.id} order by seq`;
    expect(stored.map((r) => r.event.includes(text))).toEqual([true, true]);
    expect((await listMachineEvents(t.db.sql, conv.id, conv.id)).map((e) => e.event)).toEqual([
      { type: "a", text },
      { type: "b", text },
    ]);
  });

  it("stores the conversation's own key as '' and keeps another key's log on the same conversation apart (migration 000026)", async () => {
    const conv = await createConversation(t.db.sql, "default", "test");
    const other = await createConversation(t.db.sql, "default", "test");
    const wb = "interaction:01a24146-7fbd-7fe0-9e1e-d04585ee1efb";
    expect(storedKey(conv.id, conv.id)).toBe("");
    expect(storedKey(wb, conv.id)).toBe(wb);
    // Interleaved: a clinic-style log (key = the conversation id), a Workbench-style one beside it
    // on the same conversation, and another conversation's own log, all with the same label.
    await appendMachineEvents(t.db.sql, conv.id, conv.id, [{ type: "xstate.init", input: {} }], null, "m@1");
    await appendMachineEvents(t.db.sql, wb, conv.id, [{ type: "xstate.init", input: { wb: true } }], null, "m@1");
    await appendMachineEvents(t.db.sql, other.id, other.id, [{ type: "xstate.init", input: {} }], null, "m@1");
    await appendMachineEvents(t.db.sql, conv.id, conv.id, [{ type: "a" }, { type: "b" }], RUN1, "m@1");
    await appendMachineEvents(t.db.sql, wb, conv.id, [{ type: "w" }], RUN1, "m@1");
    await appendMachineEvents(t.db.sql, other.id, other.id, [{ type: "o" }], RUN2, "m@2");

    const stored = await t.db.sql<{ conversation_id: string; snapshot_key: string; seq: number; machine: string }[]>`
      select conversation_id, snapshot_key, seq, machine from machine_events
      where conversation_id in (${conv.id}, ${other.id}) order by conversation_id = ${other.id}, snapshot_key, seq`;
    // The conversation id is not repeated as the key; each log numbers its seqs and finds its label on its own.
    expect(
      stored.map((r) => [r.conversation_id === conv.id ? "conv" : "other", r.snapshot_key, r.seq, r.machine]),
    ).toEqual([
      ["conv", "", 1, "m@1"],
      ["conv", "", 3, ""],
      ["conv", wb, 1, "m@1"],
      ["conv", wb, 2, ""],
      ["other", "", 1, "m@1"],
      ["other", "", 2, "m@2"],
    ]);

    // Each lists back as it was given, as before the key was stored once.
    const listed = async (key: string, conversationId: string) =>
      (await listMachineEvents(t.db.sql, key, conversationId)).map((e) => [
        e.seq,
        (e.event as { type: string }).type,
        e.machine,
        e.runId,
      ]);
    expect(await listed(conv.id, conv.id)).toEqual([
      [1, "xstate.init", "m@1", null],
      [2, "a", "m@1", RUN1],
      [3, "b", "m@1", RUN1],
    ]);
    expect(await listed(wb, conv.id)).toEqual([
      [1, "xstate.init", "m@1", null],
      [2, "w", "m@1", RUN1],
    ]);
    expect(await listed(other.id, other.id)).toEqual([
      [1, "xstate.init", "m@1", null],
      [2, "o", "m@2", RUN2],
    ]);
    expect((await listMachineEvents(t.db.sql, wb, conv.id))[0]!.event).toEqual({
      type: "xstate.init",
      input: { wb: true },
    });
    // A key is a log of its own conversation only.
    expect(await listMachineEvents(t.db.sql, wb, other.id)).toEqual([]);
    expect((await listMachineEventsAfter(t.db.sql, conv.id, conv.id, 2)).map((e) => e.seq)).toEqual([3]);
    expect((await listMachineEventsAfter(t.db.sql, wb, conv.id, 1)).map((e) => [e.seq, e.machine])).toEqual([
      [2, "m@1"],
    ]);

    // The conversation's own key spelled out in full would start a second log no reader finds: refused.
    await expect(
      t.db
        .sql`insert into machine_events (conversation_id, snapshot_key, seq, event) values (${conv.id}, ${conv.id}, 9, '{}')`,
    ).rejects.toMatchObject({ code: "23514" });
  });
});
