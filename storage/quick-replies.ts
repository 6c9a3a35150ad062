import type { Tx } from "./db";
import { isUuid } from "./ids";

/**
 * A tenant's quick replies (migration 000033): reply templates operators insert into the inbox
 * composer. Titles are unique per tenant regardless of case (the `/` filter picks by title).
 */

export interface QuickReply {
  id: string;
  title: string;
  text: string;
  createdAt: string;
  updatedAt: string;
}

interface Row {
  id: string;
  title: string;
  text: string;
  created_at: Date;
  updated_at: Date;
}
const toReply = (r: Row): QuickReply => ({
  id: r.id,
  title: r.title,
  text: r.text,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** A title another template of the tenant already has. */
export class DuplicateTitle extends Error {}

const isUniqueViolation = (e: unknown) => (e as { code?: unknown }).code === "23505";

export async function listQuickReplies(sql: Tx, tenantId: string): Promise<QuickReply[]> {
  const rows = await sql<Row[]>`
    select id, title, text, created_at, updated_at from quick_replies
     where tenant_id = ${tenantId} order by lower(title), id`;
  return rows.map(toReply);
}

export async function createQuickReply(
  sql: Tx,
  tenantId: string,
  r: { title: string; text: string },
): Promise<QuickReply> {
  try {
    const [row] = await sql<Row[]>`
      insert into quick_replies (tenant_id, title, text) values (${tenantId}, ${r.title}, ${r.text})
      returning id, title, text, created_at, updated_at`;
    return toReply(row!);
  } catch (e) {
    if (isUniqueViolation(e)) throw new DuplicateTitle(r.title);
    throw e;
  }
}

/** null: no such template of the tenant. */
export async function updateQuickReply(
  sql: Tx,
  tenantId: string,
  id: string,
  r: { title: string; text: string },
): Promise<QuickReply | null> {
  if (!isUuid(id)) return null;
  try {
    const [row] = await sql<Row[]>`
      update quick_replies set title = ${r.title}, text = ${r.text}, updated_at = now()
       where id = ${id} and tenant_id = ${tenantId}
      returning id, title, text, created_at, updated_at`;
    return row ? toReply(row) : null;
  } catch (e) {
    if (isUniqueViolation(e)) throw new DuplicateTitle(r.title);
    throw e;
  }
}

export async function deleteQuickReply(sql: Tx, tenantId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const rows = await sql`delete from quick_replies where id = ${id} and tenant_id = ${tenantId} returning id`;
  return rows.length > 0;
}
