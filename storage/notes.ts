import type { Tx } from "./db";

/**
 * Operators' internal notes on a thread (migration 000034). Kept apart from `messages` and
 * `thread_events` on purpose: the transcript route, the model's prompt history and the patient's
 * event stream read only those tables, so nothing here can leak to the patient or the model.
 * The caller has checked that the conversation is the tenant's.
 */

export interface Note {
  id: string;
  author: string;
  text: string;
  createdAt: string;
}

interface Row {
  id: string;
  author: string;
  text: string;
  created_at: Date;
}
const toNote = (r: Row): Note => ({ id: r.id, author: r.author, text: r.text, createdAt: r.created_at.toISOString() });

export async function listNotes(sql: Tx, conversationId: string): Promise<Note[]> {
  const rows = await sql<Row[]>`
    select id, author, text, created_at from thread_notes
     where conversation_id = ${conversationId} order by created_at, id`;
  return rows.map(toNote);
}

export async function addNote(sql: Tx, conversationId: string, n: { author: string; text: string }): Promise<Note> {
  const [row] = await sql<Row[]>`
    insert into thread_notes (conversation_id, author, text) values (${conversationId}, ${n.author}, ${n.text})
    returning id, author, text, created_at`;
  return toNote(row!);
}
