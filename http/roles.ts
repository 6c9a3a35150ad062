import type { MiddlewareHandler } from "hono";
import { AppError } from "../driver/errors";
import type { LogEnv } from "./observability/logger";
import type { ConversationAccess } from "../storage/conversation-credentials";
import type { SystemContract } from "./contract";

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
const WRITE = ["POST", "PUT", "PATCH", "DELETE"] as const;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** An operation's OpenAPI path as a rule's pattern: each `{param}` one segment, a trailing slash allowed. */
const pathPattern = (path: string) =>
  new RegExp(
    `^${path
      .split(/\{[^}]+\}/)
      .map(escape)
      .join(ID)}/?$`,
  );

/** The gateway's own routes a `chat` token may use: following a run of its conversation. */
const SHARED_CHAT: Rule[] = [
  { methods: READ, path: p("/v1/runs/:id/events"), role: "chat" },
  { methods: READ, path: p("/v1/runs/:id/stages"), role: "chat" },
];

const SHARED_ADMIN: Rule[] = [
  { methods: WRITE, path: /^\/v1\/(settings|prompts)(\/|$)/, role: "admin" },
  { methods: READ, path: /^\/v1\/(settings|prompts)(\/|$)/, role: "admin" },
  // A new credential for an existing conversation (issue 47: the migration path, a lost credential).
  { methods: ["POST"], path: p("/v1/conversations/:id/credential"), role: "admin" },
  // The webhook's dead letters: what a receiver missed, and sending it again.
  { methods: [...READ, "POST"], path: /^\/v1\/webhooks(\/|$)/, role: "admin" },
];

/**
 * What the served systems' contracts open and close: each operation documented `role: "chat"`
 * (talking, reading its conversation back, following its events), and writes under a system's
 * `adminPaths` (its settings and knowledge base; reads of them are the operator's).
 */
function systemRules(systems: readonly { contract: SystemContract }[]): { chat: Rule[]; admin: Rule[] } {
  const contracts = systems.map((s) => s.contract);
  return {
    chat: contracts.flatMap((c) =>
      c.operations
        .filter((op) => op.role === "chat")
        .map((op): Rule => ({
          methods: op.method === "get" ? READ : [op.method.toUpperCase()],
          path: pathPattern(op.path),
          role: "chat",
        })),
    ),
    admin: contracts.flatMap((c) =>
      c.adminPaths ? [{ methods: WRITE, path: c.adminPaths, role: "admin" as const }] : [],
    ),
  };
}

/**
 * The role a request needs, for the systems served: the first rule that matches, else
 * `operator`. Everything under /v1 needs `operator` at least (deny by default: a route added
 * later is closed to patients until its operation is documented `chat`), and writes to
 * settings need `admin`.
 */
export function requiredRoleFor(
  systems: readonly { contract: SystemContract }[],
): (method: string, path: string) => Role {
  const own = systemRules(systems);
  const rules = [...own.chat, ...SHARED_CHAT, ...own.admin, ...SHARED_ADMIN];
  return (method, path) => {
    const m = method.toUpperCase();
    for (const r of rules) if ((r.methods === "*" || r.methods.includes(m)) && r.path.test(path)) return r.role;
    return "operator";
  };
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
