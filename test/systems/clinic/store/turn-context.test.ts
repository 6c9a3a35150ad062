import { describe, expect, it } from "vitest";
import { loadRegistry } from "../../../../systems/clinic/registry-load";
import { loadClinicTurnContext } from "../../../../systems/clinic/store/turn-context";
import { createConversation } from "../../../../storage/conversations";
import { appendMessages } from "../../../../storage/messages";
import { saveSnapshot } from "../../../../storage/snapshots";
import { useTestDatabase } from "../../../utils/db";

const t = useTestDatabase();

describe("loadClinicTurnContext", () => {
  it("finds only the tenant's own clinic thread", async () => {
    const thread = await createConversation(t.db.sql, "tenant-a", "clinic");
    const other = await createConversation(t.db.sql, "tenant-a", "workbench");
    expect(await loadClinicTurnContext(t.db.sql, "tenant-a", thread.id, 12)).toMatchObject({
      threadId: thread.id,
      snapshot: null,
      history: [],
      handling: { status: "open", escalated: false, contactPhone: null },
    });
    expect(await loadClinicTurnContext(t.db.sql, "tenant-b", thread.id, 12)).toBeNull();
    expect(await loadClinicTurnContext(t.db.sql, "tenant-a", other.id, 12)).toBeNull();
    expect(await loadClinicTurnContext(t.db.sql, "tenant-a", "no-such-thread", 12)).toBeNull();
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
    const ctx = await loadClinicTurnContext(t.db.sql, "tenant-a", thread.id, 3);
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
    expect((await loadClinicTurnContext(t.db.sql, "tenant-s", thread.id, 12))?.settingsVersions).toBe("");
    const loaded = await loadRegistry(t.db.sql, "tenant-s"); // seeds version 1 of every branch and graph
    const ctx = await loadClinicTurnContext(t.db.sql, "tenant-s", thread.id, 12);
    expect(ctx?.settingsVersions).toBe(loaded.versions);
    expect(loaded.versions).toMatch(/^[a-z_]+@1(,[a-z_]+@1)*,steps:new_booking@1$/);
  });
});
