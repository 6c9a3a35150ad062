import { createHash, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../driver/errors";
import { acceptsQueryToken, type AuthEnv, type Role } from "./roles";

export type { AuthEnv } from "./roles";

/** What a configured token grants. */
export interface TokenGrant {
  tenant: string;
  role: Role;
  /** The person the token belongs to (`…:TOKEN:Имя`); absent: nobody in particular. */
  person?: string;
  /** `…:TOKEN:*`: an integration that names the operator it acts for in the body. */
  integration?: boolean;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** The request's tenant and role, also on its log context (the request line and the turn's lines name the tenant). */
function grant(c: Context<AuthEnv>, g: TokenGrant): void {
  c.set("tenantId", g.tenant);
  c.set("role", g.role);
  c.set("identity", { person: g.person ?? null, integration: !!g.integration });
  const log = c.get("log");
  if (log) log.tenantId = g.tenant;
}

/**
 * Bearer tokens from API_TOKENS, each mapped to a tenant and a role. With no tokens configured
 * every request is tenant `default` with every right — the server refuses to listen beyond
 * loopback in that case.
 */
export function bearerAuth(tokens: Map<string, TokenGrant> | null): MiddlewareHandler<AuthEnv> {
  // Constant time in the secret's content and length: equal-length digests compared with
  // timingSafeEqual; the configured tokens' digests are taken once, not on every request.
  const grants = tokens ? [...tokens].map(([token, grant]) => ({ digest: digest(token), grant })) : [];
  return async (c, next) => {
    if (!tokens) {
      grant(c, { tenant: "default", role: "admin", integration: true });
      return next();
    }
    const header = c.req.header("authorization") ?? "";
    const m = header.match(/^Bearer\s+(.+)$/i);
    // EventSource cannot set headers: a browser may pass the token as ?access_token=, but only
    // to a GET stream route — elsewhere a token in the URL would end up in logs and histories.
    const presented =
      m?.[1]?.trim() ?? (acceptsQueryToken(c.req.method, c.req.path) ? c.req.query("access_token") : undefined);
    if (!presented) {
      const inQuery = c.req.query("access_token") !== undefined;
      throw new AppError(
        "unauthorized",
        inQuery
          ? "Токен в адресе (?access_token=) принимается только потоками событий; передайте его в заголовке Authorization: Bearer <token>."
          : "Нужен заголовок Authorization: Bearer <token>.",
      );
    }
    const presentedDigest = digest(presented);
    for (const { digest: d, grant: g } of grants) {
      if (timingSafeEqual(d, presentedDigest)) {
        grant(c, g);
        return next();
      }
    }
    throw new AppError("unauthorized", "Токен не принят.");
  };
}

export const isLoopback = (host: string) => host === "localhost" || host === "::1" || host.startsWith("127.");
