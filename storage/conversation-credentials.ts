import { createHash, randomBytes } from "node:crypto";
import type { Tx } from "./db";
import { isUuid } from "./ids";

/**
 * A conversation's own credential (issue 47 item 6). A web widget usually shares one `chat` token
 * among all its patients, so the token alone tells no patient from another: creating a
 * conversation also issues a secret that only its creator receives, and a `chat` token reads,
 * follows and writes the conversation only with it (http/conversation-access.ts). Stored as its
 * SHA-256 only (migration 000044): 32 random bytes need no salt or slow hash — nobody can guess
 * one to match a hash, and a stolen table hands out no credential.
 */

/** What a request must prove to reach a conversation (http/conversation-access.ts decides it per request). */
export type ConversationAccess =
  /** Operators, admins, integrations: the tenant check alone (their role is the permission). */
  | { any: true }
  /**
   * A `chat` token: the conversation's credential (its hash; null when none was presented).
   * `legacy`: a conversation that has no credential (created before migration 000044) is open as
   * before (CONVERSATION_LEGACY_ACCESS).
   */
  | { any: false; sha256: string | null; legacy: boolean };

/** The tenant check alone: operator and admin routes, internal readers. */
export const ANY_ACCESS: ConversationAccess = { any: true };

/** `cc_` + 43 base64url characters (256 bits): recognisable in a leak report, never guessed. */
export const newConversationCredential = (): string => `cc_${randomBytes(32).toString("base64url")}`;

export const credentialSha256 = (credential: string): string => createHash("sha256").update(credential).digest("hex");

/**
 * The condition a conversation row (`alias` names the table in the caller's query) meets when the
 * request may reach it: added to the statement that looks the conversation up, so the check costs
 * no round trip of its own. Nothing for `any`.
 */
export function accessCondition(sql: Tx, access: ConversationAccess, alias = "conversations") {
  if (access.any) return sql``;
  const column = sql(`${alias}.credential_sha256`);
  if (access.sha256 === null) return access.legacy ? sql`and ${column} is null` : sql`and false`;
  return access.legacy
    ? sql`and (${column} = ${access.sha256} or ${column} is null)`
    : sql`and ${column} = ${access.sha256}`;
}

/** Whether the request may reach the conversation without asking the database (it surely may not). */
export const surelyDenied = (access: ConversationAccess): boolean =>
  !access.any && access.sha256 === null && !access.legacy;

/**
 * A new credential for an existing conversation of the tenant (the admin's migration path, or a
 * patient who lost theirs): replaces the previous one, which stops working. Null: no such conversation.
 */
export async function issueConversationCredential(
  sql: Tx,
  tenantId: string,
  conversationId: string,
): Promise<{ conversationId: string; kind: string; credential: string; replaced: boolean } | null> {
  if (!isUuid(conversationId)) return null;
  const credential = newConversationCredential();
  const rows = await sql<{ id: string; kind: string; replaced: boolean }[]>`
    with old as (select id, credential_sha256 is not null as replaced from conversations
                 where id = ${conversationId} and tenant_id = ${tenantId} for update)
    update conversations c set credential_sha256 = ${credentialSha256(credential)}
    from old where c.id = old.id
    returning c.id, c.kind, old.replaced`;
  const r = rows[0];
  return r ? { conversationId: r.id, kind: r.kind, credential, replaced: r.replaced } : null;
}
