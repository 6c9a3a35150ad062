import { describe, expect, it } from "vitest";
import { appendMachineEvents, listMachineEvents } from "../../../storage/machine-events";
import { runMigrations } from "../../../storage/migrate";
import { loadSnapshot, saveSnapshot } from "../../../storage/snapshots";
import { listClarifications, upsertInteraction } from "../../../systems/workbench/store/interactions";
import { migrateBefore, useTestDatabase } from "../../utils/db";

/**
 * Migration 000043 on a database a server before issue 44 left behind: the clarification
 * machine's snapshots and logs go (the Interaction's snapshot is the one authority), its rows
 * stay with every fact they held, the claim columns go; the Interaction's snapshot and log stay.
 */
const handle = useTestDatabase({ migrate: false });

const conv = "01a24146-7fbd-7fe0-9e1e-d04585ee1efb";
const it1 = "interaction-01a24146-7fbe-7000-8000-0000000000aa";
const q1 = "clarification-01a24146-7fbe-7000-8000-0000000000bb";

describe("migration 000043: one authority for a clarification", () => {
  it("drops the clarification machine's snapshots, logs and claims; keeps its rows and the Interaction", async () => {
    const sql = handle.db.sql;
    await migrateBefore(sql, 43);
    await sql`insert into conversations (id, tenant_id, kind) values (${conv}, 't', 'workbench')`;
    await upsertInteraction(sql, {
      id: it1,
      conversationId: conv,
      rootMessageId: null,
      status: "completed",
      plan: null,
      planVersion: 2,
      workspaceGeneration: null,
      workspaceSnapshotSha256: null,
      documentationVersion: null,
    });
    await sql`
      insert into clarifications (id, interaction_id, task_id, slot, question, candidate_snapshot_json, status, plan_version, claim_token)
      values (${q1}, ${it1}, 'task-1', 'entity', 'Какую?', ${sql.json([{ candidateId: "c1" }] as never)}, 'answered', 1, 'token')`;
    const machines = [
      [`interaction:${it1}`, "interaction", 2],
      [`clarification:${q1}`, "clarification", 1],
    ] as const;
    for (const [key, machineId, version] of machines) {
      await saveSnapshot(sql, {
        key,
        conversationId: conv,
        machineId,
        machineVersion: version,
        snapshot: { value: "completed", context: {} },
        expectedRowVersion: null,
      });
      await appendMachineEvents(sql, key, conv, [{ type: "xstate.init", input: {} }], null, `${machineId}@${version}`);
    }

    expect(await runMigrations(sql)).toEqual(expect.arrayContaining(["000043_clarification_one_authority.sql"]));

    expect(await loadSnapshot(sql, `clarification:${q1}`)).toBeNull();
    expect(await listMachineEvents(sql, `clarification:${q1}`, conv)).toEqual([]);
    expect(await loadSnapshot(sql, `interaction:${it1}`)).toMatchObject({ machineId: "interaction" });
    expect(await listMachineEvents(sql, `interaction:${it1}`, conv)).toHaveLength(1);
    expect(await listClarifications(sql, it1)).toEqual([
      expect.objectContaining({ id: q1, status: "answered", candidates: [{ candidateId: "c1" }], planVersion: 1 }),
    ]);
    const columns = await sql<{ name: string }[]>`
      select column_name as name from information_schema.columns where table_name = 'clarifications' and column_name like 'claim%'`;
    expect(columns).toEqual([]);
  });
});
