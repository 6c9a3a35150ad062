import { ANY_ACCESS } from "../../../../storage/conversation-credentials";
import { describe, expect, it } from "vitest";
import { loadRegistry } from "../../../../systems/clinic/registry-load";
import { loadClinicTurnContext } from "../../../../systems/clinic/store/turn-context";
import { createConversation } from "../../../../storage/conversations";
import { appendMessages } from "../../../../storage/messages";
import { saveSnapshot } from "../../../../storage/snapshots";
import { onServer, useTestDatabase } from "../../../utils/db";
import { fixedUuid } from "../../../utils/ids";

/** Run and process ids are UUIDs (migration 000023). */
const OWNER = fixedUuid(9);
const R0 = fixedUuid(0);
const R1 = fixedUuid(1);
const R2 = fixedUuid(2);

const t = useTestDatabase();

describe("loadClinicTurnContext", () => {
  it("finds only the tenant's own clinic thread", async () => {
    const thread = await createConversation(t.db.sql, "tenant-a", "clinic");
    const other = await createConversation(t.db.sql, "tenant-a", "workbench");
    expect(await loadClinicTurnContext(t.db.sql, "tenant-a", thread.id, 12, ANY_ACCESS)).toMatchObject({
      threadId: thread.id,
      snapshot: null,
      history: [],
      handling: { status: "open", escalated: false, contactPhone: null },
    });
    expect(await loadClinicTurnContext(t.db.sql, "tenant-b", thread.id, 12, ANY_ACCESS)).toBeNull();
    expect(await loadClinicTurnContext(t.db.sql, "tenant-a", other.id, 12, ANY_ACCESS)).toBeNull();
    expect(await loadClinicTurnContext(t.db.sql, "tenant-a", "no-such-thread", 12, ANY_ACCESS)).toBeNull();
  });

  it("brings the snapshot row and the last messages, oldest first", async () => {
    const thread = await createConversation(t.db.sql, "tenant-a", "clinic");
    await saveSnapshot(t.db.sql, {
      key: thread.id,
      conversationId: thread.id,
      machineId: "clinic-dialogue",
      machineVersion: 3,
      snapshot: { value: "idle" },
      expectedRowVersion: null,
    });
    await appendMessages(
      t.db.sql,
      thread.id,
      Array.from({ length: 5 }, (_, i) => ({
        role: i % 2 ? ("assistant" as const) : ("user" as const),
        text: `m${i + 1}`,
      })),
    );
    const ctx = await loadClinicTurnContext(t.db.sql, "tenant-a", thread.id, 3, ANY_ACCESS);
    expect(ctx?.snapshot).toEqual({
      key: thread.id,
      conversationId: thread.id,
      machineId: "clinic-dialogue",
      machineVersion: 3,
      rowVersion: 1,
      snapshot: { value: "idle" },
    });
    expect(ctx?.history).toEqual([
      { role: "user", text: "m3" },
      { role: "assistant", text: "m4" },
      { role: "user", text: "m5" },
    ]);
  });

  it("names the active settings exactly as the registry does (the registry cache's key)", async () => {
    const thread = await createConversation(t.db.sql, "tenant-s", "clinic");
    expect((await loadClinicTurnContext(t.db.sql, "tenant-s", thread.id, 12, ANY_ACCESS))?.settingsVersions).toBe("");
    const loaded = await loadRegistry(t.db.sql, "tenant-s"); // seeds version 1 of every branch and graph
    const ctx = await loadClinicTurnContext(t.db.sql, "tenant-s", thread.id, 12, ANY_ACCESS);
    expect(ctx?.settingsVersions).toBe(loaded.versions);
    expect(loaded.versions).toMatch(/^[a-z_]+@1(,[a-z_]+@1)*,steps:new_booking@1$/);
  });

  it("with a run to start: starts it only for the tenant's existing thread, one running run per thread", async () => {
    const thread = await createConversation(t.db.sql, "tenant-r", "clinic");
    const run = (id: string, conversationId = thread.id) => ({
      run: { id, conversationId, tenantId: "tenant-r", kind: "clinic", owner: OWNER },
      asyncCommit: onServer,
    });
    const runsOf = (conversationId: string) =>
      t.db.sql<{ id: string; status: string }[]>`select id, status from runs where conversation_id = ${conversationId}`;
    // Not this tenant's, not a clinic thread, no thread: nothing read, nothing started.
    expect(await loadClinicTurnContext(t.db.sql, "tenant-x", thread.id, 12, ANY_ACCESS, run(R0))).toBeNull();
    const other = await createConversation(t.db.sql, "tenant-r", "workbench");
    expect(await loadClinicTurnContext(t.db.sql, "tenant-r", other.id, 12, ANY_ACCESS, run(R0, other.id))).toBeNull();
    expect(await runsOf(thread.id)).toEqual([]);
    expect(await runsOf(other.id)).toEqual([]);

    const ctx = await loadClinicTurnContext(t.db.sql, "tenant-r", thread.id, 12, ANY_ACCESS, run(R1));
    expect(ctx).toMatchObject({ threadId: thread.id, snapshot: null, history: [] });
    expect(await runsOf(thread.id)).toEqual([{ id: R1, status: "running" }]);
    // The unique index of running runs refuses a second one, and the statement writes nothing.
    await expect(loadClinicTurnContext(t.db.sql, "tenant-r", thread.id, 12, ANY_ACCESS, run(R2))).rejects.toMatchObject(
      {
        code: "23505",
      },
    );
    expect(await runsOf(thread.id)).toEqual([{ id: R1, status: "running" }]);
  });
});

describe("the settings the thread last named", () => {
  it("are found by one probe of the partial index, however long the thread (migration 000047)", async () => {
    const thread = await createConversation(t.db.sql, "tenant-a", "clinic");
    const meta = (i: number) =>
      i === 1 ? { settings: "a@1" } : i === 150 ? { settings: "b@2" } : { state: { step: "intro" }, n: i };
    await appendMessages(
      t.db.sql,
      thread.id,
      Array.from({ length: 300 }, (_, i) => ({
        role: i % 2 ? ("assistant" as const) : ("user" as const),
        text: `m${i}`,
        meta: meta(i),
      })),
    );
    await t.db.sql`analyze messages`;
    expect((await loadClinicTurnContext(t.db.sql, "tenant-a", thread.id, 12, ANY_ACCESS))?.namedSettings).toBe("b@2");
    // The read's own predicate: an index scan of messages_named_settings, not a walk over 300 rows.
    const plan = (
      await t.db.sql<{ "QUERY PLAN": string }[]>`explain
        select m.meta ->> 'settings' from messages m
        where m.conversation_id = ${thread.id} and (m.meta ->> 'settings') is not null order by m.seq desc limit 1`
    )
      .map((r) => r["QUERY PLAN"])
      .join("\n");
    expect(plan).toContain("messages_named_settings");
  });
});
