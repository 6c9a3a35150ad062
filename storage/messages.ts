import type { Tx } from "./db";

export interface NewMessage {
  role: "user" | "assistant" | "system" | "tool";
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
 * instead of an interleaving. Returns the stored rows' ids in order. `reopen`: a patient
 * writing into a closed conversation opens it again (the inbox), in the same statement.
 */
export async function appendMessages(
  tx: Tx,
  conversationId: string,
  messages: NewMessage[],
  runId: string | null = null,
  o: { reopen?: boolean } = {},
): Promise<{ id: string; seq: number }[]> {
  if (messages.length === 0) return [];
  const payload = messages.map((m) => ({ role: m.role, text: m.text, meta: m.meta ?? {} }));
  const rows = await tx<{ id: bigint; seq: number }[]>`
    ${o.reopen ? tx`with reopened as (update conversations set status = 'open' where id = ${conversationId} and status = 'closed')` : tx``}
    insert into messages (conversation_id, seq, role, text, meta, run_id)
    select ${conversationId}, base.s + m.ord, m.role, m.text, m.meta, ${runId}
    from (select coalesce(max(seq), 0) as s from messages where conversation_id = ${conversationId}) base,
         rows from (jsonb_to_recordset(${tx.json(payload as never)}) as (role text, text text, meta jsonb)) with ordinality as m(role, text, meta, ord)
    order by m.ord
    returning id, seq`;
  return rows.map((r) => ({ id: String(r.id), seq: r.seq }));
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
