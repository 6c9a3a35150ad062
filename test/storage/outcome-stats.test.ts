import { describe, expect, it } from "vitest";
import { createConversation } from "../../storage/conversations";
import { outcomeStats } from "../../storage/outcome-stats";
import { closeRun, getRun, insertRun } from "../../storage/runs";
import { uuidv7 } from "../../storage/time-ordered-id";
import { useTestDatabase } from "../utils/db";
import { fixedUuid } from "../utils/ids";

const t = useTestDatabase();

describe("runs without reason codes (migration 000025)", () => {
  it("store null, read back as no codes, and count with the runs stored as '{}' before", async () => {
    const conv = await createConversation(t.db.sql, "tenant-o", "test");
    const ids = [uuidv7(), uuidv7(), uuidv7()];
    for (const id of ids) {
      await insertRun(t.db.sql, {
        id,
        conversationId: conv.id,
        tenantId: "tenant-o",
        kind: "test",
        owner: fixedUuid(1),
      });
      await closeRun(t.db.sql, id, [{ seq: 1, event: "done", data: {} }], {
        status: "completed",
        outcome: "answered",
        reasonCodes: id === ids[2] ? ["x"] : [],
      });
    }
    // A row as stored before the migration: an empty array.
    await t.db.sql`update runs set reason_codes = '{}' where id = ${ids[1]!}`;
    const stored = await t.db.sql<{ id: string; reason_codes: string[] | null }[]>`
      select id, reason_codes from runs where conversation_id = ${conv.id}`;
    expect(Object.fromEntries(stored.map((r) => [r.id, r.reason_codes]))).toEqual({
      [ids[0]!]: null,
      [ids[1]!]: [],
      [ids[2]!]: ["x"],
    });
    expect((await getRun(t.db.sql, ids[0]!))?.reasonCodes).toEqual([]);
    const stats = await outcomeStats(t.db.sql, { tenantId: "tenant-o" });
    expect(stats.byOutcomeAndReasons).toEqual(
      expect.arrayContaining([
        { kind: "test", outcome: "answered", reasonCodes: [], runs: 2 },
        { kind: "test", outcome: "answered", reasonCodes: ["x"], runs: 1 },
      ]),
    );
    expect(stats.byOutcomeAndReasons).toHaveLength(2);
    expect(stats.byReasonCode).toEqual([{ kind: "test", reasonCode: "x", runs: 1 }]);
  });
});
