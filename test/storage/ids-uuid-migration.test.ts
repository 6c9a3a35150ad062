import { describe, expect, it } from "vitest";
import { runMigrations } from "../../storage/migrate";
import { migrateBefore, useTestDatabase } from "../utils/db";

/**
 * Migration 000023 turns conversation, run and process ids from text into uuid on a database that
 * already holds turns: every id keeps its value, every foreign key comes back (whichever system's
 * table holds it) and still cascades, and a later turn's rows go in as before.
 */
const handle = useTestDatabase({ migrate: false });

const conv = "01a24146-7fbd-7fe0-9e1e-d04585ee1efb";
const run = "01a24146-7fbe-7000-8000-000000000001";
const owner = "5f0c2a8e-3b7d-4c1e-9a2f-6d8e1b4c7a90";

describe("migration 000023: ids as uuid", () => {
  it("converts stored ids in place and keeps every foreign key", async () => {
    const sql = handle.db.sql;
    // Everything before 000023, then a turn stored the old way.
    await migrateBefore(sql, 23);
    const fks = async () =>
      (
        await sql<{ def: string }[]>`
          select conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) as def from pg_constraint
          where contype = 'f' and confrelid in ('conversations'::regclass, 'runs'::regclass) order by 1`
      ).map((r) => r.def);
    const fksBefore = await fks();
    expect(fksBefore.length).toBeGreaterThanOrEqual(10);
    await sql`insert into conversations (id, tenant_id, kind) values (${conv}, 't', 'clinic')`;
    await sql`insert into runs (id, conversation_id, tenant_id, kind, status, owner) values (${run}, ${conv}, 't', 'clinic', 'completed', ${owner})`;
    await sql`insert into messages (conversation_id, seq, role, text, run_id) values (${conv}, 1, 'user', 'привет', ${run})`;
    await sql`insert into run_events (run_id, seq, event, data) values (${run}, 1, 'done', '{}')`;
    await sql`insert into machine_events (snapshot_key, seq, conversation_id, event, run_id) values (${conv}, 1, ${conv}, '[]', ${run})`;
    await sql`insert into idempotency_keys (tenant_id, key, request_hash, run_id, conversation_id) values ('t', 'k', 'h', ${run}, ${conv})`;

    expect(await runMigrations(sql)).toEqual(
      expect.arrayContaining(["000023_ids_uuid.sql", "000024_claim_run_id_uuid.sql"]),
    );

    const types = await sql<{ col: string; type: string }[]>`
      select table_name || '.' || column_name as col, data_type as type from information_schema.columns
      where table_schema = 'public' and (column_name in ('conversation_id', 'run_id', 'claim_run_id', 'owner')
         or (table_name in ('conversations', 'runs') and column_name = 'id'))`;
    expect(types.filter((t) => t.type !== "uuid")).toEqual([]);
    expect(types.map((t) => t.col)).toEqual(
      expect.arrayContaining([
        "conversations.id",
        "runs.id",
        "runs.owner",
        "messages.run_id",
        "evidence_runs.run_id",
        // clarifications.claim_run_id was converted too, then dropped by migration 000043 (the
        // clarification's claim protocol went; the run applies every migration).
      ]),
    );
    // The same constraints, with the same definitions, on the same tables (tables of later
    // migrations, which the run above also applied, aside).
    const later = ["thread_events ", "thread_notes ", "inbox_reminders ", "outbox_seq "];
    expect((await fks()).filter((d) => !later.some((t) => d.startsWith(t)))).toEqual(fksBefore);
    const [r] = await sql<
      { id: string; conversation_id: string; owner: string }[]
    >`select id, conversation_id, owner from runs`;
    expect(r).toEqual({ id: run, conversation_id: conv, owner });
    expect(await sql`select run_id from messages where conversation_id = ${conv}`).toEqual([{ run_id: run }]);
    // A foreign key still refuses an unknown conversation, and erasing cascades to every table.
    await expect(
      sql`insert into messages (conversation_id, seq, role, text) values ('01a24146-0000-7000-8000-000000000000', 1, 'user', 'x')`,
    ).rejects.toMatchObject({ code: "23503" });
    await sql`delete from conversations where id = ${conv}`;
    for (const table of ["runs", "messages", "run_events", "machine_events", "idempotency_keys"])
      expect(await sql`select 1 from ${sql(table)}`).toHaveLength(0);
  });
});
