import type { Sql } from "../storage/db";

/**
 * The floor of a durable turn: one bare transaction — BEGIN, insert the two messages
 * (one statement), upsert the one state row, COMMIT — with the same postgres.js client the
 * engine uses. Its tables carry what a turn needs and nothing more: no foreign keys, no
 * run rows, no events.
 */
export async function createFloorTables(sql: Sql): Promise<void> {
  await sql`create table if not exists floor_messages (
    id bigserial primary key, conversation_id text not null, seq integer not null, role text not null,
    text text not null, meta jsonb not null default '{}'::jsonb, created_at timestamptz not null default now(),
    unique (conversation_id, seq))`;
  await sql`create table if not exists floor_state (
    key text primary key, version integer not null, state jsonb not null, updated_at timestamptz not null default now())`;
}

/** A control-state snapshot of the size the engine persists (a few hundred bytes). */
export const floorState = (turn: number) => ({
  status: "active",
  value: "idle",
  historyValue: {},
  children: {},
  context: {
    turns: turn,
    step: "qualify",
    activeBranch: "general_info",
    slots: { name: "Алексей", phone: null },
    handoffCount: 0,
    softInsertionCount: 0,
    last: "Добрый день! Чем могу помочь?",
  },
});

export interface FloorLane {
  conversationId: string;
  seq: number;
}

export async function floorTurn(sql: Sql, lane: FloorLane, user: string, assistant: string): Promise<void> {
  const seq = lane.seq;
  lane.seq += 2;
  const state = sql.json(floorState(seq / 2) as never);
  await sql.begin(async (tx) => {
    await tx`insert into floor_messages (conversation_id, seq, role, text)
             values (${lane.conversationId}, ${seq + 1}, 'user', ${user}), (${lane.conversationId}, ${seq + 2}, 'assistant', ${assistant})`;
    await tx`insert into floor_state (key, version, state) values (${lane.conversationId}, 1, ${state})
             on conflict (key) do update set state = excluded.state, version = floor_state.version + 1, updated_at = now()`;
  });
}
