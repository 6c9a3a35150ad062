import type postgres from "postgres";
import { z } from "zod";
import type { ConversationKind } from "./conversations";
import type { Tx } from "./db";
import { isUuid } from "./ids";
import { InboxFilter, InboxItem, InboxStatus } from "../contract/inbox";

/**
 * The operators' inbox over every system's conversations (issue 17 item 1): tenant-scoped,
 * ordered "waiting for a human" first, then by last activity, paginated by an opaque keyset
 * cursor so a page never repeats or skips a row while new messages arrive.
 */

// The wire schemas are the shared contract's (contract/inbox.ts), re-exported for the repository's users.
export { InboxFilter, InboxItem, InboxStatus };

interface Row {
  id: string;
  kind: ConversationKind;
  status: InboxStatus;
  escalated: boolean;
  escalation_reason: string | null;
  escalated_at: Date | null;
  contact_phone: string | null;
  taken_by: string | null;
  assigned_to: string | null;
  created_at: Date;
  last_activity_at: Date;
  /** Microseconds since the epoch, as text: a JS Date would drop the microseconds the keyset needs. */
  activity_us: string;
  message_count: number;
  last_role: string | null;
  last_text: string | null;
}

const Cursor = z.tuple([z.boolean(), z.string().regex(/^\d+$/), z.string().refine(isUuid)]);
const encodeCursor = (r: Row) => Buffer.from(JSON.stringify([r.escalated, r.activity_us, r.id])).toString("base64url");
function decodeCursor(s: string): z.infer<typeof Cursor> | null {
  try {
    const v = Cursor.safeParse(JSON.parse(Buffer.from(s, "base64url").toString("utf8")));
    return v.success ? v.data : null;
  } catch {
    return null;
  }
}

const toItem = (r: Row): InboxItem => ({
  id: r.id,
  system: r.kind,
  status: r.status,
  escalated: r.escalated,
  escalationReason: r.escalation_reason,
  escalatedAt: r.escalated_at?.toISOString() ?? null,
  contactPhone: r.contact_phone,
  takenBy: r.taken_by,
  assignedTo: r.assigned_to,
  createdAt: r.created_at.toISOString(),
  lastActivityAt: r.last_activity_at.toISOString(),
  messageCount: Number(r.message_count),
  lastMessage: r.last_role ? { role: r.last_role, text: r.last_text ?? "" } : null,
});

export class BadCursor extends Error {}

const columns = (sql: Tx) => sql`
  c.id, c.kind, c.status, c.escalated, c.escalation_reason, c.escalated_at, c.contact_phone, c.taken_by, c.assigned_to, c.created_at, c.last_activity_at,
  (extract(epoch from c.last_activity_at) * 1000000)::bigint::text as activity_us,
  (select count(*)::int from messages m where m.conversation_id = c.id) as message_count,
  l.role as last_role, left(l.text, 300) as last_text`;
const lastMessage = (sql: Tx) =>
  sql`left join lateral (select role, text from messages m where m.conversation_id = c.id order by seq desc limit 1) l on true`;

/**
 * The hour of an activity time, as the generated column conversations.activity_hour (migration
 * 000016) computes it. The inbox orders by (escalated, activity_hour, last_activity_at, id): the
 * same order as without the hour (it never decreases as the time grows), but the index holds only
 * the hour, so a turn's touch of last_activity_at within the hour updates no index.
 */
const activityHour = (sql: Tx, at: postgres.Fragment) =>
  sql`date_bin('1 hour', ${at}, timestamptz '2000-01-01 00:00:00+00')`;

/** The rows after a cursor's row in the inbox order (its hour derived from its time, as the column's). */
function keysetAfter(sql: Tx, [escalated, us, id]: z.infer<typeof Cursor>): postgres.Fragment {
  const at = sql`(timestamptz 'epoch' + ${us}::bigint * interval '1 microsecond')`;
  return sql`and (c.escalated, c.activity_hour, c.last_activity_at, c.id) < (${escalated}, ${activityHour(sql, at)}, ${at}, ${id})`;
}

/**
 * `me`: the asking operator's name, for `assigned=me` (the route passes the token's person,
 * http/operator-identity.ts).
 */
export async function listInbox(
  sql: Tx,
  tenantId: string,
  f: InboxFilter,
  me?: string,
): Promise<{ items: InboxItem[]; nextCursor: string | null }> {
  const after = f.cursor ? decodeCursor(f.cursor) : null;
  if (f.cursor && !after) throw new BadCursor("cursor");
  const like = f.q ? `%${f.q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%` : null;
  const rows = await sql<Row[]>`
    select ${columns(sql)}
    from conversations c ${lastMessage(sql)}
    where c.tenant_id = ${tenantId} and c.kind <> 'test'
      ${f.system ? sql`and c.kind = ${f.system}` : sql``}
      ${f.status ? sql`and c.status = ${f.status}` : sql``}
      ${f.escalated !== undefined ? sql`and c.escalated = ${f.escalated}` : sql``}
      ${f.reason ? sql`and c.escalation_reason = ${f.reason}` : sql``}
      ${f.assigned === "me" ? sql`and c.assigned_to = ${me ?? ""}` : f.assigned === "none" ? sql`and c.assigned_to is null` : sql``}
      ${f.from ? sql`and c.last_activity_at >= ${f.from}::timestamptz` : sql``}
      ${f.to ? sql`and c.last_activity_at < ${f.to}::timestamptz + (case when ${f.to}::text ~ '^\\d{4}-\\d{2}-\\d{2}$' then interval '1 day' else interval '0' end)` : sql``}
      ${like ? sql`and (c.id::text ilike ${like} or c.contact_phone ilike ${like} or exists (select 1 from messages m where m.conversation_id = c.id and m.text ilike ${like}))` : sql``}
      ${after ? keysetAfter(sql, after) : sql``}
    order by c.escalated desc, c.activity_hour desc, c.last_activity_at desc, c.id desc
    limit ${f.limit + 1}`;
  const page = rows.slice(0, f.limit);
  return { items: page.map(toItem), nextCursor: rows.length > f.limit ? encodeCursor(page.at(-1)!) : null };
}

export async function findInboxItem(sql: Tx, tenantId: string, id: string): Promise<InboxItem | null> {
  if (!isUuid(id)) return null;
  const rows = await sql<Row[]>`
    select ${columns(sql)} from conversations c ${lastMessage(sql)}
    where c.id = ${id} and c.tenant_id = ${tenantId} and c.kind <> 'test'`;
  return rows[0] ? toItem(rows[0]) : null;
}

/** Who handles the conversation now. Returns false when there is no such conversation of the tenant. */
export async function setHandling(
  sql: Tx,
  tenantId: string,
  id: string,
  change: { status: InboxStatus; takenBy?: string | null; clearEscalation?: boolean },
): Promise<boolean> {
  const taken = change.status === "taken";
  const rows = await sql`
    update conversations set
      status = ${change.status},
      taken_by = ${taken ? (change.takenBy ?? null) : null},
      taken_at = ${taken ? sql`now()` : sql`null`},
      escalated = ${change.clearEscalation ? sql`false` : sql`escalated`}
    where id = ${id} and tenant_id = ${tenantId}
    returning id`;
  return rows.length > 0;
}

/** Who answers the conversation (issue 43): an assignment, a take, a transfer; null unassigns. */
export async function setAssignee(sql: Tx, tenantId: string, id: string, assignee: string | null): Promise<void> {
  await sql`update conversations set assigned_to = ${assignee} where id = ${id} and tenant_id = ${tenantId}`;
}

/** An escalation, recorded in the turn's transaction (the inbox shows it, the webhook's outbox row goes with it). */
export async function markEscalated(tx: Tx, conversationId: string, reason: string | null): Promise<void> {
  await tx`
    update conversations set escalated = true, escalated_at = now(), escalation_reason = ${reason},
      status = case when status = 'closed' then 'open' else status end
    where id = ${conversationId}`;
}

export async function setEscalationReason(tx: Tx, conversationId: string, reason: string): Promise<void> {
  await tx`update conversations set escalation_reason = coalesce(escalation_reason, ${reason}) where id = ${conversationId} and escalated`;
}

/** Whether the thread is escalated, since when and why (an operator's action records it with the action). */
export async function readEscalation(
  tx: Tx,
  conversationId: string,
): Promise<{ escalated: boolean; escalatedAt: Date | null; reason: string | null } | null> {
  const [r] = await tx<{ escalated: boolean; escalated_at: Date | null; escalation_reason: string | null }[]>`
    select escalated, escalated_at, escalation_reason from conversations where id = ${conversationId}`;
  return r ? { escalated: r.escalated, escalatedAt: r.escalated_at, reason: r.escalation_reason } : null;
}

export async function saveContactPhone(tx: Tx, conversationId: string, phone: string): Promise<void> {
  await tx`update conversations set contact_phone = ${phone} where id = ${conversationId}`;
}

export interface Handling {
  status: InboxStatus;
  escalated: boolean;
  contactPhone: string | null;
}

export async function readHandling(sql: Tx, conversationId: string): Promise<Handling | null> {
  const [r] = await sql<{ status: InboxStatus; escalated: boolean; contact_phone: string | null }[]>`
    select status, escalated, contact_phone from conversations where id = ${conversationId}`;
  return r ? { status: r.status, escalated: r.escalated, contactPhone: r.contact_phone } : null;
}

/**
 * The right to erasure: the conversation and everything of it. Every table that refers to a
 * conversation or a run does so with `on delete cascade` (the erasure test checks every table of
 * the schema afterwards, so a future table without it fails there). Refused while a turn runs.
 */
async function eraseOnce(
  sql: Tx,
  tenantId: string,
  id: string,
): Promise<{ result: "erased" | "not_found" | "running"; runIds: string[] }> {
  const runs = await sql<
    { id: string }[]
  >`select r.id from runs r join conversations c on c.id = r.conversation_id where c.id = ${id} and c.tenant_id = ${tenantId}`;
  // One statement: a turn that starts between a check and the delete cannot slip through.
  const rows = await sql`
    delete from conversations c where c.id = ${id} and c.tenant_id = ${tenantId} and c.kind <> 'test'
      and not exists (select 1 from runs r where r.conversation_id = c.id and r.status = 'running')
    returning c.id`;
  if (rows.length) return { result: "erased", runIds: runs.map((r) => r.id) };
  const [left] = await sql`select 1 from conversations where id = ${id} and tenant_id = ${tenantId} and kind <> 'test'`;
  return { result: left ? "running" : "not_found", runIds: [] };
}

/**
 * The cascade deletes runs that a background flush or heartbeat of this or another process may
 * be updating at the same moment; PostgreSQL then aborts one side as a deadlock (40P01). The
 * delete is idempotent, so it is simply tried again.
 */
export async function eraseConversation(
  sql: Tx,
  tenantId: string,
  id: string,
): Promise<{ result: "erased" | "not_found" | "running"; runIds: string[] }> {
  if (!isUuid(id)) return { result: "not_found", runIds: [] };
  for (let attempt = 1; ; attempt++) {
    try {
      return await eraseOnce(sql, tenantId, id);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (attempt >= 3 || (code !== "40P01" && code !== "40001")) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}
