import type { Context } from "hono";
import { AppError } from "../driver/errors";
import { isBlank } from "../contract/user-text";
import type { TokenGrant } from "./auth";
import { hasRole, type AuthEnv } from "./roles";

/**
 * Who an operator is (issue 43): the person API_TOKENS binds to the request's token
 * (`operator@clinic:TOKEN:Мария Иванова`, http/config.ts), never whatever a request body says.
 * A body's `operator` name is honoured only from an integration token (`…:TOKEN:*`, configured by
 * the admin for a help-desk bridge that acts for many people) and in the open development mode
 * (no API_TOKENS, loopback only). Every operator route — take, message, transfer, and the notes,
 * presence and replies of other modules — reads the author through `operatorOf`, so the rule
 * lives in one place.
 */

/** The anonymous author: a token bound to nobody, or an integration that named nobody. */
export const ANONYMOUS_OPERATOR = "оператор";

/** What the auth middleware knows of the token's person (set by http/auth.ts). */
export interface TokenIdentity {
  /** The person the token is bound to; null: none. */
  person: string | null;
  /** The token may act for people it names in the body (an integration, or no API_TOKENS at all). */
  integration: boolean;
}

export interface OperatorIdentity {
  /** The name the patient and the log see. */
  name: string;
  /** Where the name came from: the token's person, an integration's body, or nobody. */
  via: "token" | "integration" | "anonymous";
}

/** A name as texts are validated (contract/user-text.ts): visible, one line, bounded. */
export const MAX_OPERATOR_NAME = 100;
export function operatorNameProblem(name: string): string | null {
  const t = name.trim();
  if (isBlank(t)) return "пустое имя (только пробелы или невидимые символы)";
  if (t.length > MAX_OPERATOR_NAME) return `имя длиннее ${MAX_OPERATOR_NAME} символов`;
  if (/[\p{Cc}]/u.test(t)) return "управляющие символы в имени";
  return null;
}

/**
 * The operator who acts in this request. `claimed` is the body's `operator`, if any: refused
 * (403 `operator_name_not_allowed`) from a token that is bound to a person other than the one it
 * names, or bound to nobody; an invalid name is a 400 like an empty text.
 */
export function operatorOf(c: Context<AuthEnv>, claimed?: string | null): OperatorIdentity {
  const id: TokenIdentity = c.get("identity") ?? { person: null, integration: true };
  const named = claimed?.trim() || null;
  if (named !== null) {
    const problem = operatorNameProblem(named);
    if (problem) throw new AppError("invalid_request", `operator: ${problem}.`, { reason: "invalid_operator_name" });
  }
  if (id.person !== null) {
    if (named !== null && named !== id.person)
      throw new AppError(
        "forbidden",
        `Этот токен принадлежит оператору «${id.person}»: действовать от имени «${named}» им нельзя.`,
        { reason: "operator_name_not_allowed", person: id.person },
      );
    return { name: id.person, via: "token" };
  }
  if (named !== null) {
    if (!id.integration)
      throw new AppError(
        "forbidden",
        "Имя оператора в теле запроса принимается только от интеграционного токена (API_TOKENS: …:TOKEN:*); " +
          "токен оператора привязывается к человеку: …:TOKEN:Имя.",
        { reason: "operator_name_not_allowed" },
      );
    return { name: named, via: "integration" };
  }
  return { name: ANONYMOUS_OPERATOR, via: "anonymous" };
}

/** The people API_TOKENS binds to a tenant's operator (and admin) tokens, sorted; empty: none configured. */
export function knownOperators(tokens: Map<string, TokenGrant> | null, tenant: string): string[] {
  const people = new Set<string>();
  for (const g of tokens?.values() ?? [])
    if (g.tenant === tenant && g.person && hasRole(g.role, "operator")) people.add(g.person);
  return [...people].sort((a, b) => a.localeCompare(b, "ru"));
}

/**
 * A colleague named as an assignee or a transfer's target: a valid name, and — when API_TOKENS
 * names the tenant's people — one of them (a typo must not hand a patient to nobody).
 */
export function colleague(tokens: Map<string, TokenGrant> | null, tenant: string, name: string): string {
  const t = name.trim();
  const problem = operatorNameProblem(t);
  if (problem) throw new AppError("invalid_request", `Оператор: ${problem}.`, { reason: "invalid_operator_name" });
  const known = knownOperators(tokens, tenant);
  if (known.length > 0 && !known.includes(t))
    throw new AppError("invalid_request", `Оператора «${t}» нет среди сотрудников (GET /v1/inbox/operators).`, {
      reason: "unknown_operator",
      known,
    });
  return t;
}
