import type postgres from "postgres";
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
  const [reopened, inserted] = messagesInsert(tx, conversationId, messages, runId, o);
  const rows = await tx<{ id: bigint; seq: number }[]>`
    ${reopened ? tx`with reopened as (${reopened})` : tx``}
    ${inserted}
    returning id, seq`;
  return rows.map((r) => ({ id: String(r.id), seq: r.seq }));
}

/**
 * The statements of `appendMessages` as CTE bodies, for a turn's single commit statement too
 * (storage/turn-commit.ts): the reopening update (null without `reopen`) and the insert, each
 * writing only when `when` holds (there: the snapshot's version check passed).
 */
export function messagesInsert(
  sql: Tx,
  conversationId: string,
  messages: NewMessage[],
  runId: string | null = null,
  o: { reopen?: boolean; when?: postgres.Fragment } = {},
): [reopen: postgres.Fragment | null, insert: postgres.Fragment] {
  const when = o.when ?? sql`true`;
  const payload = messages.map((m) => ({ role: m.role, text: m.text, meta: m.meta ?? {} }));
  return [
    o.reopen
      ? sql`update conversations set status = 'open' where id = ${conversationId} and status = 'closed' and ${when}`
      : null,
    sql`insert into messages (conversation_id, seq, role, text, meta, run_id)
    select ${conversationId}, base.s + m.ord, m.role, m.text, m.meta, ${runId}
    from (select coalesce(max(seq), 0) as s from messages where conversation_id = ${conversationId}) base,
         rows from (jsonb_to_recordset(${sql.json(payload as never)}) as (role text, text text, meta jsonb)) with ordinality as m(role, text, meta, ord)
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
