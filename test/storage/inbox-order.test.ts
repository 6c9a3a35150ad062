import { describe, expect, it } from "vitest";
import { createConversation } from "../../storage/conversations";
import { listInbox, type InboxFilter } from "../../storage/inbox";
import { appendMessages } from "../../storage/messages";
import { useTestDatabase } from "../utils/db";

/**
 * The inbox index holds the hour of the last activity, not the instant (migration 000016), so a
 * turn's touch within the hour is a HOT update. The order and the keyset pages must be exactly
 * those of (escalated desc, last_activity_at desc, id desc), across hours and within one.
 */
const t = useTestDatabase();

const filter = (o: Partial<InboxFilter> = {}): InboxFilter => ({ limit: 20, ...o }) as InboxFilter;

describe("inbox order (activity hour in the index)", () => {
  it("pages in the exact order of escalation, last activity and id, across hours and inside one", async () => {
    const tenant = `inbox-order-${Date.now()}`;
    const base = Date.parse("2026-03-01T10:00:00Z");
    // Times inside one hour, on its edges, in other hours and days; two conversations share a time (the id decides).
    const offsets = [
      0,
      1,
      59 * 60_000 + 999,
      60 * 60_000,
      60 * 60_000,
      3 * 3600_000 + 5,
      -1,
      -3600_000 - 7,
      86_400_000,
    ];
    const rows: { id: string; at: number; escalated: boolean }[] = [];
    for (const [i, off] of offsets.entries()) {
      const c = await createConversation(t.db.sql, tenant, "clinic");
      const escalated = i % 4 === 1;
      const at = new Date(base + off);
      await t.db.sql`update conversations set last_activity_at = ${at}, escalated = ${escalated} where id = ${c.id}`;
      rows.push({ id: c.id, at: at.getTime(), escalated });
    }
    const expected = [...rows]
      .sort((a, b) => Number(b.escalated) - Number(a.escalated) || b.at - a.at || (a.id < b.id ? 1 : -1))
      .map((r) => r.id);
    expect((await listInbox(t.db.sql, tenant, filter())).items.map((i) => i.id)).toEqual(expected);
    for (const limit of [1, 2, 3]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await listInbox(t.db.sql, tenant, filter({ limit, cursor }));
        seen.push(...page.items.map((i) => i.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(seen).toEqual(expected);
    }
  });

  it("a message moves its conversation to the top, and its touch within the hour is a HOT update", async () => {
    const tenant = `inbox-touch-${Date.now()}`;
    const a = await createConversation(t.db.sql, tenant, "clinic");
    const b = await createConversation(t.db.sql, tenant, "clinic");
    await appendMessages(t.db.sql, a.id, [{ role: "user", text: "раз" }]);
    await appendMessages(t.db.sql, b.id, [{ role: "user", text: "два" }]);
    expect((await listInbox(t.db.sql, tenant, filter())).items.map((i) => i.id)).toEqual([b.id, a.id]);
    await t.db.sql.begin(async (tx) => {
      // The last activity a microsecond before this transaction's now(): the touch moves it by that much.
      await tx`update conversations set last_activity_at = now() - interval '1 microsecond' where id = ${a.id}`;
      const hot = async () =>
        (
          await tx<
            { n: number }[]
          >`select coalesce(sum(n_tup_hot_upd), 0)::int as n from pg_stat_xact_user_tables where relname = 'conversations'`
        )[0]!.n;
      const [{ crossed } = { crossed: true }] = await tx<{ crossed: boolean }[]>`
        select date_bin('1 hour', now() - interval '1 microsecond', timestamptz '2000-01-01 00:00:00+00')
               <> date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00') as crossed`;
      const before = await hot();
      await appendMessages(tx, a.id, [{ role: "user", text: "три" }]);
      expect(await hot()).toBe(before + (crossed ? 0 : 1));
    });
    expect((await listInbox(t.db.sql, tenant, filter())).items.map((i) => i.id)).toEqual([a.id, b.id]);
    const [row] = await t.db.sql<
      { hour: Date; at: Date }[]
    >`select activity_hour as hour, last_activity_at as at from conversations where id = ${a.id}`;
    expect(row!.hour.getTime()).toBe(Math.floor(row!.at.getTime() / 3_600_000) * 3_600_000);
  });
});
