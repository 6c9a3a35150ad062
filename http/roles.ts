import type { MiddlewareHandler } from "hono";
import { AppError } from "../driver/errors";
import type { LogEnv } from "./observability/logger";
import type { ConversationAccess } from "../storage/conversation-credentials";

/**
 * What a token may do (issue 17 item 2). Ordered: each role has the rights of the ones before it.
 * - `chat`: a patient's or user's client — conversations and the runs they stream;
 * - `operator`: also the inbox, statistics, debugging (diagrams, replay, inspector), the
 *   knowledge base read-only;
 * - `admin`: also settings (branches, steps), knowledge-base writes, prompts.
 */
export const ROLES = ["chat", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** What the auth middleware (and the request log before it) puts on a request (http/auth.ts re-exports it). */
export type AuthEnv = {
  Variables: {
    tenantId: string;
    role: Role;
    /** The token's person (http/operator-identity.ts reads it through `operatorOf`). */
    identity?: { person: string | null; integration: boolean };
    /** What the request must prove to reach a conversation (http/conversation-access.ts), on its routes. */
    conversationAccess?: ConversationAccess;
  } & LogEnv["Variables"];
};

export const roleRank = (r: Role) => ROLES.indexOf(r);
export const hasRole = (have: Role, need: Role) => roleRank(have) >= roleRank(need);

interface Rule {
  methods: readonly string[] | "*";
  path: RegExp;
  role: Role;
}

const ID = "[^/]+";
const p = (s: string) => new RegExp(`^${s.replace(/:id/g, ID)}/?$`);
const READ = ["GET", "HEAD"] as const;

/**
 * The routes a `chat` token may use: talking, reading its conversation back, following a run.
 * Everything else under /v1 needs `operator` at least (deny by default: a route added later is
 * closed to patients until it is listed here), and writes to settings need `admin`.
 */
const RULES: Rule[] = [
  { methods: ["POST"], path: p("/v1/clinic/threads"), role: "chat" },
  { methods: READ, path: p("/v1/clinic/threads/:id"), role: "chat" },
  { methods: ["POST"], path: p("/v1/clinic/threads/:id/messages"), role: "chat" },
  { methods: READ, path: p("/v1/clinic/threads/:id/events"), role: "chat" },
  { methods: ["POST"], path: p("/v1/workbench/conversations"), role: "chat" },
  { methods: READ, path: p("/v1/workbench/conversations/:id"), role: "chat" },
  { methods: ["POST"], path: p("/v1/workbench/conversations/:id/messages"), role: "chat" },
  { methods: READ, path: p("/v1/workbench/interactions/:id"), role: "chat" },
  { methods: READ, path: p("/v1/workbench/sample-workspace"), role: "chat" },
  { methods: ["POST"], path: p("/v1/evidence/conversations"), role: "chat" },
  { methods: READ, path: p("/v1/evidence/conversations/:id"), role: "chat" },
  { methods: ["POST"], path: p("/v1/evidence/conversations/:id/messages"), role: "chat" },
  { methods: READ, path: p("/v1/evidence/runs/:id"), role: "chat" },
  { methods: READ, path: p("/v1/runs/:id/events"), role: "chat" },
  { methods: READ, path: p("/v1/runs/:id/stages"), role: "chat" },
  // Settings and knowledge-base writes (reads of the same resources are the operator's).
  { methods: ["POST", "PUT", "PATCH", "DELETE"], path: /^\/v1\/clinic\/(branches|kb|desk)(\/|$)/, role: "admin" },
  { methods: ["POST", "PUT", "PATCH", "DELETE"], path: /^\/v1\/(settings|prompts)(\/|$)/, role: "admin" },
  { methods: READ, path: /^\/v1\/(settings|prompts)(\/|$)/, role: "admin" },
  // A new credential for an existing conversation (issue 47: the migration path, a lost credential).
  { methods: ["POST"], path: p("/v1/conversations/:id/credential"), role: "admin" },
  // The webhook's dead letters: what a receiver missed, and sending it again.
  { methods: [...READ, "POST"], path: /^\/v1\/webhooks(\/|$)/, role: "admin" },
];

/** The role a request needs: the first rule that matches, else `operator`. */
export function requiredRole(method: string, path: string): Role {
  const m = method.toUpperCase();
  for (const r of RULES) if ((r.methods === "*" || r.methods.includes(m)) && r.path.test(path)) return r.role;
  return "operator";
}

/**
 * GET routes that answer with an event stream: the only ones a browser's EventSource opens, and
 * EventSource cannot send headers — so only these accept the token as ?access_token=.
 */
const STREAM_ROUTES = [p("/v1/runs/:id/events"), p("/v1/inspect/events")];
export const acceptsQueryToken = (method: string, path: string) =>
  method.toUpperCase() === "GET" && STREAM_ROUTES.some((r) => r.test(path));

/** Middleware factory: the request's token must carry at least `need` (set by bearerAuth). */
export function requireRole(need: Role | ((method: string, path: string) => Role)): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const role = need instanceof Function ? need(c.req.method, c.req.path) : need;
    if (!hasRole(c.get("role"), role)) {
      throw new AppError("forbidden", `Недостаточно прав: нужна роль «${role}», у токена — «${c.get("role")}».`, {
        required: role,
      });
    }
    return next();
  };
}
