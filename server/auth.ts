import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { AppError } from "../driver/errors";

export type AuthEnv = { Variables: { tenantId: string } };

/** Constant time in the secret's content and length: equal-length digests, compared with timingSafeEqual. */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest());
}

/**
 * Bearer tokens from API_TOKENS, each mapped to a tenant. With no tokens configured every
 * request is tenant `default` — the server refuses to listen beyond loopback in that case.
 */
export function bearerAuth(tokens: Map<string, string> | null): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    if (!tokens) {
      c.set("tenantId", "default");
      return next();
    }
    const header = c.req.header("authorization") ?? "";
    const m = header.match(/^Bearer\s+(.+)$/i);
    // EventSource cannot set headers: a browser client may pass the token as ?access_token=.
    const presented = m?.[1]?.trim() ?? c.req.query("access_token");
    if (!presented) throw new AppError("unauthorized", "Нужен заголовок Authorization: Bearer <token>.");
    for (const [token, tenant] of tokens) {
      if (sameSecret(token, presented)) {
        c.set("tenantId", tenant);
        return next();
      }
    }
    throw new AppError("unauthorized", "Токен не принят.");
  };
}

export const isLoopback = (host: string) => host === "localhost" || host === "::1" || host.startsWith("127.");
