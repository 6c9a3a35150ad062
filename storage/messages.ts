import type postgres from "postgres";
import type { Tx } from "./db";
import { JSON_OID } from "./runs";

export interface NewMessage {
  role: "user" | "assistant" | "system" | "tool" | "operator";
  text: string;
  meta?: Record<string, unknown>;
}

export interface StoredMessage extends Required<NewMessage> {
  id: string;
  seq: number;
  runId: string | null;
  createdAt: Date;
}

/**
 * Appends messages in one statement: sequence numbers continue from the conversation's
 * last one, and the (conversation_id, seq) key turns a concurrent append into an error
 * instead of an interleaving. Returns the stored rows' ids in order. The same statement moves
 * the conversation's last activity (the operator inbox's order) and, with `reopen`, opens a
 * closed conversation again (a patient writing into it).
 */
export async function appendMessages(
  tx: Tx,
  conversationId: string,
  messages: NewMessage[],
  runId: string | null = null,
  o: { reopen?: boolean } = {},
): Promise<{ id: string; seq: number }[]> {
  if (messages.length === 0) return [];
  const [touched, inserted] = messagesInsert(tx, conversationId, messages, runId, o);
  const rows = await tx<{ id: bigint; seq: number }[]>`
    with touched as (${touched})
    ${inserted}
    returning id, seq`;
  return rows.map((r) => ({ id: String(r.id), seq: r.seq }));
}

/**
 * The statements of `appendMessages` as CTE bodies, for a turn's single commit statement too
 * (storage/turn-commit.ts): the conversation's update (its last activity; with `reopen`, a
 * closed conversation opens) and the insert, each writing only when `when` holds (there: the
 * snapshot's version check passed). Every message goes in through here: the conversation's
 * activity moves with it in the same statement, one row update, instead of a trigger per
 * insert statement (migration 000018 dropped it: a PL/pgSQL call and a transition table per turn).
 */
export function messagesInsert(
  sql: Tx,
  conversationId: string,
  messages: NewMessage[],
  runId: string | null = null,
  o: { reopen?: boolean; when?: postgres.Fragment } = {},
): [touch: postgres.Fragment, insert: postgres.Fragment] {
  const when = o.when ?? sql`true`;
  const payload = messages.map((m) => ({ role: m.role, text: m.text, meta: m.meta ?? {} }));
  return [
    // greatest(): an activity never moves back (the trigger it replaces kept the same rule).
    sql`update conversations set last_activity_at = greatest(last_activity_at, now())${
      o.reopen ? sql`, status = case when status = 'closed' then 'open' else status end` : sql``
    } where id = ${conversationId} and ${when}`,
    sql`insert into messages (conversation_id, seq, role, text, meta, run_id)
    select ${conversationId}, base.s + m.ord, m.role, m.text, m.meta, ${runId}
    from (select coalesce(max(seq), 0) as s from messages where conversation_id = ${conversationId}) base,
         rows from (json_to_recordset(${sql.typed(payload as never, JSON_OID)}) as (role text, text text, meta json)) with ordinality as m(role, text, meta, ord)
    where ${when}
    order by m.ord`,
  ];
}

export async function listMessages(sql: Tx, conversationId: string, limit = 1000): Promise<StoredMessage[]> {
  const rows = await sql<
    {
      id: bigint;
      seq: number;
      role: NewMessage["role"];
      text: string;
      meta: Record<string, unknown>;
      run_id: string | null;
      created_at: Date;
    }[]
  >`
    select id, seq, role, text, meta, run_id, created_at from (
      select * from messages where conversation_id = ${conversationId} order by seq desc limit ${limit}
    ) m order by seq`;
  return rows.map((r) => ({
    id: String(r.id),
    seq: r.seq,
    role: r.role,
    text: r.text,
    meta: r.meta,
    runId: r.run_id,
    createdAt: r.created_at,
  }));
}
