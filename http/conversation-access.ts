import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../driver/errors";
import type { Operation } from "../contract/http";
import { ANY_ACCESS, credentialSha256, type ConversationAccess } from "../storage/conversation-credentials";
import {
  createConversation,
  findConversation,
  type Conversation,
  type ConversationKind,
} from "../storage/conversations";
import type { Tx } from "../storage/db";
import type { AuthEnv } from "./roles";

/**
 * A conversation belongs to whoever started it (issue 47 item 6). Creating a conversation answers
 * with its credential (storage/conversation-credentials.ts); a `chat` token — often one token
 * shared by a whole web widget — then reaches the conversation, its runs and its live events only
 * with that credential, and without it gets the very 404 a missing conversation gets. Operators,
 * admins and integrations (`…:TOKEN:*`) are unaffected: their role is their permission.
 *
 * This middleware decides what a request must prove (`ConversationAccess`); the check itself is a
 * condition of the statement that looks the conversation up (`accessCondition`), so it costs no
 * round trip of its own — on the turn path the clinic's one first statement carries it.
 */

/** The header a client sends the credential in. */
export const CONVERSATION_TOKEN_HEADER = "X-Conversation-Token";
/** The query parameter an EventSource sends it in (it cannot set headers): event-stream routes only. */
export const CONVERSATION_TOKEN_QUERY = "conversation_token";

/** The one 404 of a conversation that is missing, another tenant's, or not this `chat` client's. */
export const conversationNotFound = () =>
  new AppError("not_found", "Такого диалога нет.", { reason: "conversation_not_found" });

/** Whether the request's token must present a conversation's credential: a `chat` token that is not an integration. */
export const needsCredential = (c: Context<AuthEnv>) => c.get("role") === "chat" && !c.get("identity")?.integration;

interface Scoped {
  method: string;
  path: RegExp;
  /** A GET answering with an event stream: the one kind of route that takes the credential in the URL. */
  stream: boolean;
}

const template = (path: string) => new RegExp(`^${path.replace(/\{\w+\}/g, "[^/]+")}/?$`);

/** Operations a `chat` client must present a conversation's credential to (`credential: "required"`). */
export function scopedOperations(operations: readonly Operation[]): Scoped[] {
  return operations
    .filter((op) => op.credential === "required")
    .map((op) => ({
      method: op.method.toUpperCase(),
      path: template(op.path),
      stream: op.method === "get" && Object.values(op.responses).some((r) => r.sse),
    }));
}

/**
 * Middleware factory over the operations the served systems (and the gateway's run routes)
 * declare (http/openapi/document.ts `documentedOperations`): the list of conversation routes is
 * the documented one, so a route documented as needing the credential is checked, and a route that
 * asks for the access without being declared fails loudly (`accessOf`).
 */
export function conversationAccess(
  operations: readonly Operation[],
  o: { legacyAccess: boolean },
): MiddlewareHandler<AuthEnv> {
  const scoped = scopedOperations(operations);
  return async (c, next) => {
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    const op = scoped.find((s) => s.method === method && s.path.test(c.req.path));
    if (!op) return next();
    const inQuery = c.req.query(CONVERSATION_TOKEN_QUERY);
    // A secret in a URL ends up in proxies' logs and browser histories: only where nothing else works.
    if (inQuery !== undefined && !op.stream)
      throw new AppError(
        "invalid_request",
        `Ключ диалога в адресе (?${CONVERSATION_TOKEN_QUERY}=) принимается только потоками событий; передайте его в заголовке ${CONVERSATION_TOKEN_HEADER}.`,
      );
    if (!needsCredential(c)) {
      c.set("conversationAccess", ANY_ACCESS);
      return next();
    }
    const presented = (c.req.header(CONVERSATION_TOKEN_HEADER) ?? inQuery)?.trim();
    c.set("conversationAccess", {
      any: false,
      sha256: presented ? credentialSha256(presented) : null,
      legacy: o.legacyAccess,
    });
    return next();
  };
}

/** What this request must prove to reach a conversation; set by `conversationAccess` for every declared route. */
export function accessOf(c: Context<AuthEnv>): ConversationAccess {
  const access = c.get("conversationAccess");
  if (!access)
    throw new AppError(
      "internal",
      `Маршрут ${c.req.method} ${c.req.path} читает диалог, но не объявлен в контракте как требующий ключа диалога.`,
    );
  return access;
}

/** The creation's answer: the credential in the body and in a header (a proxy or SDK may read either). */
export function credentialHeaders(credential: string): Record<string, string> {
  return { [CONVERSATION_TOKEN_HEADER]: credential };
}

/** Creates a conversation of `kind` for the request's tenant and answers 201 with its id and credential. */
export async function answerNewConversation(c: Context<AuthEnv>, sql: Tx, kind: ConversationKind): Promise<Response> {
  const conv = await createConversation(sql, c.get("tenantId"), kind);
  return c.json(
    { conversationId: conv.id, conversationToken: conv.credential },
    201,
    credentialHeaders(conv.credential),
  );
}

/** The request's conversation of `kind` (path `:id`): missing, another tenant's and (a `chat` token) not its own are one 404. */
export async function requestConversation(c: Context<AuthEnv>, sql: Tx, kind: ConversationKind): Promise<Conversation> {
  const conv = await findConversation(sql, c.get("tenantId"), c.req.param("id") ?? "", kind, accessOf(c));
  if (!conv) throw conversationNotFound();
  return conv;
}
