import { describe, expect, it } from "vitest";
import { runMigrations } from "../../../../storage/migrate";
import { migrateBefore, useTestDatabase } from "../../../utils/db";
import { readClinicHuman } from "../../../../systems/clinic/turn";

/**
 * Migration 000029: a clinic thread an operator had taken before the human was a machine state
 * (the inbox status `taken`) is held by that operator after the upgrade; other threads are not.
 */
const handle = useTestDatabase({ migrate: false });

const taken = "01a24146-7fbd-7fe0-9e1e-d04585ee1e01";
const open = "01a24146-7fbd-7fe0-9e1e-d04585ee1e02";
const v2 = (branch: string | null) => ({
  value: { patient: branch ?? "unrouted", turn: "idle" },
  context: {
    state: {
      activeBranch: branch,
      routerDecision: branch,
      step: null,
      slots: {},
      handoffCount: 0,
      softInsertionCount: 0,
      suspended: null,
      escalationReason: null,
    },
    turn: null,
  },
  historyValue: {},
  status: "active",
});

describe("migration 000029: taken threads become the machine's human state", () => {
  it("writes context.human for taken threads only", async () => {
    const sql = handle.db.sql;
    await migrateBefore(sql, 29);
    for (const [id, status, by] of [
      [taken, "taken", "Мария"],
      [open, "open", null],
    ] as const) {
      await sql`insert into conversations (id, tenant_id, kind, status, taken_by, taken_at)
                values (${id}, 't', 'clinic', ${status}, ${by}, ${by ? sql`now()` : null})`;
      await sql`insert into machine_snapshots (key, conversation_id, machine_id, machine_version, row_version, snapshot)
                values (${id}, ${id}, 'clinic-dialogue', 2, 1, ${sql.json(v2("escalate_human") as never)})`;
    }
    expect(await runMigrations(sql)).toContain("000029_human_state.sql");
    const human = await readClinicHuman(sql, taken);
    expect(human).toMatchObject({ operator: "Мария", replies: 0 });
    expect(Number.isNaN(Date.parse(human!.since))).toBe(false);
    expect(await readClinicHuman(sql, open)).toBeNull();
  });
});
