import { uuidv7 } from "./time-ordered-id";
import type { Tx } from "./db";
import { isUuid } from "./ids";
import {
  accessCondition,
  credentialSha256,
  newConversationCredential,
  surelyDenied,
  type ConversationAccess,
} from "./conversation-credentials";

/** A dialogue system's kind (`DialogueSystem.kinds`, systems/index.ts); the table's check constraint is what refuses an unknown one. */
export type ConversationKind = string;

export interface Conversation {
  id: string;
  tenantId: string;
  kind: ConversationKind;
  createdAt: Date;
}

/**
 * A new conversation with its credential (storage/conversation-credentials.ts), in one statement:
 * the credential is returned here once and only its hash is stored.
 */
export async function createConversation(
  sql: Tx,
  tenantId: string,
  kind: ConversationKind,
  id: string = uuidv7(),
): Promise<Conversation & { credential: string }> {
  const credential = newConversationCredential();
  const [row] = await sql<{ id: string; tenant_id: string; kind: ConversationKind; created_at: Date }[]>`
    insert into conversations (id, tenant_id, kind, credential_sha256)
    values (${id}, ${tenantId}, ${kind}, ${credentialSha256(credential)})
    returning id, tenant_id, kind, created_at`;
  return { id: row!.id, tenantId: row!.tenant_id, kind: row!.kind, createdAt: row!.created_at, credential };
}

/**
 * Tenant-scoped lookup: another tenant's conversation — or, for a `chat` token, one whose
 * credential the request lacks (`access`) — is indistinguishable from a missing one.
 */
export async function findConversation(
  sql: Tx,
  tenantId: string,
  id: string,
  kind: ConversationKind | undefined,
  access: ConversationAccess,
): Promise<Conversation | null> {
  if (!isUuid(id) || surelyDenied(access)) return null;
  const rows = await sql<{ id: string; tenant_id: string; kind: ConversationKind; created_at: Date }[]>`
    select id, tenant_id, kind, created_at from conversations
    where id = ${id} and tenant_id = ${tenantId} ${kind ? sql`and kind = ${kind}` : sql``}
      ${accessCondition(sql, access)}`;
  const r = rows[0];
  return r ? { id: r.id, tenantId: r.tenant_id, kind: r.kind, createdAt: r.created_at } : null;
}

/** Whether the conversation still exists (a follower of an erased one stops). */
export async function conversationExists(sql: Tx, id: string): Promise<boolean> {
  const rows = await sql`select 1 from conversations where id = ${id}`;
  return rows.length > 0;
}
