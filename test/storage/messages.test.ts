import { describe, expect, it } from "vitest";
import { createConversation } from "../../storage/conversations";
import { appendMessages, listMessages } from "../../storage/messages";
import { useTestDatabase } from "../utils/db";

const t = useTestDatabase();

const activity = async (id: string) =>
  (
    await t.db.sql<{ at: Date; status: string }[]>`
      select last_activity_at as at, status from conversations where id = ${id}`
  )[0]!;

describe("appendMessages", () => {
  it("numbers the messages on from the last one and moves the conversation's last activity with them", async () => {
    const conv = await createConversation(t.db.sql, "tenant-m", "clinic");
    const before = await activity(conv.id);
    await new Promise((r) => setTimeout(r, 15));
    const first = await appendMessages(t.db.sql, conv.id, [
      { role: "user", text: "раз" },
      { role: "assistant", text: "два" },
    ]);
    expect(first.map((m) => m.seq)).toEqual([1, 2]);
    const after = await activity(conv.id);
    expect(after.at.getTime()).toBeGreaterThan(before.at.getTime());
    const [stored] = await listMessages(t.db.sql, conv.id, 1);
    expect(stored!.createdAt.getTime()).toBe(after.at.getTime());
    expect((await appendMessages(t.db.sql, conv.id, [{ role: "user", text: "три" }])).map((m) => m.seq)).toEqual([3]);
  });

  it("never moves the activity back (an operator's later action stays the latest)", async () => {
    const conv = await createConversation(t.db.sql, "tenant-m", "clinic");
    const future = new Date(Date.now() + 3_600_000);
    await t.db.sql`update conversations set last_activity_at = ${future} where id = ${conv.id}`;
    await appendMessages(t.db.sql, conv.id, [{ role: "user", text: "позже" }]);
    expect((await activity(conv.id)).at.getTime()).toBe(future.getTime());
  });

  it("reopens a closed conversation only when asked, in the same statement", async () => {
    const conv = await createConversation(t.db.sql, "tenant-m", "clinic");
    await t.db.sql`update conversations set status = 'closed' where id = ${conv.id}`;
    await appendMessages(t.db.sql, conv.id, [{ role: "assistant", text: "без открытия" }]);
    expect((await activity(conv.id)).status).toBe("closed");
    await appendMessages(t.db.sql, conv.id, [{ role: "user", text: "снова пишу" }], null, { reopen: true });
    expect((await activity(conv.id)).status).toBe("open");
    // An open or taken conversation keeps its status.
    await t.db.sql`update conversations set status = 'taken' where id = ${conv.id}`;
    await appendMessages(t.db.sql, conv.id, [{ role: "user", text: "ещё" }], null, { reopen: true });
    expect((await activity(conv.id)).status).toBe("taken");
  });
});
