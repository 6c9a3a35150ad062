import { loadDeskConfig, type DeskConfig } from "./desk-config";
import { existsSync, readFileSync, statSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { z } from "zod";
import type { TokenGrant } from "./auth";
import { ROLES, type Role as AccessRole } from "./roles";
import { operatorNameProblem } from "./operator-identity";
import type { ModelLimits, Role } from "../llm/types";
import type { WebhookConfig } from "./webhook";

/** A hostname (RFC 1123 labels) or an IP address: what a server can listen on. */
const hostSchema = z
  .string()
  .refine(
    (h) =>
      isIP(h.replace(/^\[(.*)\]$/, "$1")) !== 0 ||
      /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(h),
    "expected a host name or an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1)",
  );
/** An absolute URL with one of `protocols`. */
const urlOf = (protocols: string[], example: string) =>
  z.string().refine(
    (u) => {
      try {
        const url = new URL(u);
        return protocols.includes(url.protocol) && url.hostname !== "";
      } catch {
        return false;
      }
    },
    `expected a ${protocols.map((p) => p.replace(":", "://")).join(" or ")} URL, e.g. ${example}`,
  );
/** A folder the server reads or writes: absent is fine (created when needed), a file is not. */
const folder = (mustExist: boolean) =>
  z.string().superRefine((p, ctx) => {
    if (p.startsWith("memory://")) return;
    let isDir: boolean | null = null;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      // absent
    }
    if (isDir === false) ctx.addIssue({ code: "custom", message: `${resolve(p)} is a file, not a folder` });
    else if (isDir === null && mustExist) ctx.addIssue({ code: "custom", message: `no such folder: ${resolve(p)}` });
  });

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: hostSchema.default("127.0.0.1"),
  LOG_LEVEL: z.enum(LOG_LEVELS).optional(),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(120_000).default(5_000),
  HTTP_KEEP_ALIVE_MS: z.coerce.number().int().min(1_000).max(290_000).default(65_000),
  DATABASE_URL: urlOf(["postgres:", "postgresql:"], "postgres://user@127.0.0.1:5432/app").optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(500).default(10),
  DATA_DIR: folder(false).default("./.data"),
  OPENAI_BASE_URL: urlOf(["http:", "https:"], "https://api.deepseek.com/v1").optional(),
  OPENAI_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  LLM_MAX_REPLY_CHARS: z.coerce.number().int().positive().optional(),
  LLM_TOTAL_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  LLM_FETCH: z.enum(["http", "platform"]).default("http"),
  DOCS_DIR: folder(true).optional(),
  AI_DEBUG: z
    .enum(["true", "false", "1", "0", ""])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  DEBUG_DIR: folder(false).optional(),
  API_TOKENS: z.string().optional(),
  // Off: a `chat` token reaches no conversation without its credential, older ones included (doc/api.md).
  CONVERSATION_LEGACY_ACCESS: z
    .enum(["true", "false", "1", "0"], { message: "expected true or false" })
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(2 * 1024 * 1024),
  RUN_DETACH_GRACE_MS: z.coerce.number().int().min(0).default(5_000),
  WEBHOOK_URL: z.string().url().optional().or(z.literal("")),
  WEBHOOK_SECRET: z.string().optional(),
  // Unset: a delivery is retried until its horizon, however many attempts that takes.
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).optional(),
  WEBHOOK_BACKOFF_MS: z.coerce.number().int().min(1).default(1_000),
  WEBHOOK_BACKOFF_MAX_MS: z.coerce.number().int().min(1).default(600_000),
  // 24 h: longer than an ordinary outage of a receiver (a deploy, a night without on-call).
  WEBHOOK_RETRY_HORIZON_MS: z.coerce.number().int().min(1).default(86_400_000),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  RUN_STALE_MS: z.coerce.number().int().min(300).default(15_000),
  RUN_SWEEP_MS: z.coerce.number().int().min(100).optional(),
  COMMIT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  RUN_CLOSE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  SWEEP_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).optional(),
});

export interface Config {
  port: number;
  host: string;
  /**
   * How long an idle kept-alive connection stays open (HTTP_KEEP_ALIVE_MS). Longer than a
   * client's or proxy's idle reuse window, so the server never closes a socket just as a client
   * sends its next request on it (an ECONNRESET for a POST, which a client cannot safely retry);
   * Node's own 5 s lost turns between a load test's windows.
   */
  keepAliveMs: number;
  databaseUrl?: string;
  /** Connections to the PostgreSQL server (DATABASE_POOL_MAX); embedded PGlite has one. */
  databasePoolMax: number;
  /** How long opening a connection to the server may take (DATABASE_CONNECT_TIMEOUT_MS). */
  databaseConnectTimeoutMs: number;
  dataDir: string;
  llm: {
    baseURL?: string;
    apiKey?: string;
    model?: string;
    roleModels: Record<string, string | undefined>;
    timeoutMs: number;
    /** Unset fields fall back to DEFAULT_LIMITS (llm/types.ts). */
    limits: Partial<ModelLimits>;
    roleLimits: Partial<Record<Role, Partial<ModelLimits>>>;
    /** LLM_FETCH: node:http (default) or Node's own fetch. */
    transport: "http" | "platform";
  };
  docsDir?: string;
  aiDebug: boolean;
  debugDir: string;
  /** token → tenant and role; null = open (only allowed on loopback). */
  tokens: Map<string, TokenGrant> | null;
  /**
   * CONVERSATION_LEGACY_ACCESS (default off): a conversation created before credentials existed
   * (migration 000044; it has none) stays open to any `chat` token of its tenant, as before —
   * a transition window for widgets mid-conversation during the upgrade. Off, such a conversation
   * is reached by a `chat` token only after an admin issues it a credential.
   */
  conversations: { legacyAccess: boolean };
  bodyLimitBytes: number;
  /** How long a run whose client left keeps going, waiting for a Last-Event-ID follower. */
  detachGraceMs: number;
  /** The escalation webhook (http/webhook.ts); off without a URL. */
  webhook: WebhookConfig;
  /** On SIGTERM, how long running turns may go on before they are stopped (failed with `error` + `done`). */
  shutdownGraceMs: number;
  /**
   * A run silent (no stored event, no heartbeat) for `staleMs` is taken for dead; every process
   * sweeps such runs every `sweepMs` (failed with `error` + `done`), so a run whose process was
   * killed does not stay `running` on a shared PostgreSQL server until someone resumes it.
   */
  runs: { staleMs: number; sweepMs: number };
  /** The operator's desk: presence and reminders (http/desk-config.ts). */
  desk: DeskConfig;
  /**
   * Every wait on the database is bounded (issue 47): a turn's commit (`commitMs`, then the
   * turn ends with `error` + `done`, nothing stored), a failed run's close (`closeMs`), one
   * sweep (`sweepMs`); and the whole shutdown (`shutdownMs`): past it the process exits anyway
   * and logs what it was waiting on.
   */
  deadlines: { commitMs: number; closeMs: number; sweepMs: number; shutdownMs: number };
}

/** Reads `.env` (if present) without overriding the real environment. */
export function loadDotEnv(path = resolve(".env")): void {
  if (!existsSync(path)) return;
  for (const line of readFileSync(path, "utf8").split(/\r?\n/)) {
    const m = line.match(/^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/);
    if (!m || line.trimStart().startsWith("#")) continue;
    const [, key, raw] = m as unknown as [string, string, string];
    if (process.env[key] === undefined) process.env[key] = raw.replace(/^(['"])(.*)\1$/, "$2");
  }
}

/**
 * API_TOKENS: comma-separated entries `[role@]tenant:token[:person]` or a bare `token` (tenant
 * `default`). Without a role a token keeps full rights (`admin`), as before roles existed. The
 * person (issue 43) is the operator the token belongs to — the author of its takes and messages
 * (http/operator-identity.ts); `*` instead of a person marks an integration that names the
 * operator in each request's body. A token cannot contain `:`, `,` or whitespace.
 *
 * Validated whole at start (issue 47 item 4): an unknown role (`Chat@clinic:T1` used to become an
 * admin of tenant `Chat@clinic`), a malformed entry, a duplicate token, an invalid person stop the
 * start with a message naming the entry by its number and its role@tenant, never its token.
 */
export function parseTokens(spec: string | undefined): Map<string, TokenGrant> | null {
  if (!spec || !spec.trim()) return null;
  const map = new Map<string, TokenGrant>();
  const seen = new Map<string, number>();
  const entries = spec.split(",").map((s) => s.trim());
  entries.forEach((item, i) => {
    if (!item) return; // a trailing or doubled comma is harmless
    const n = i + 1;
    const fail = (why: string): never => {
      throw new Error(`Invalid configuration: API_TOKENS entry #${n} (${maskEntry(item)}): ${why}`);
    };
    let role: AccessRole = "admin";
    let rest = item;
    const colon = item.indexOf(":");
    const at = item.indexOf("@");
    if (at >= 0 && (colon < 0 || at < colon)) {
      const name = item.slice(0, at);
      if (!(ROLES as readonly string[]).includes(name))
        fail(`unknown role "${name}" (roles: ${ROLES.join(", ")}; lower case)`);
      role = name as AccessRole;
      rest = item.slice(at + 1);
    }
    const parts = rest.split(":");
    // A person's name may have spaces ("Мария Иванова"); the role, tenant and token may not.
    if (/\s/.test(item.slice(0, item.length - rest.length) + parts.slice(0, 2).join(":")))
      fail("whitespace inside an entry");
    let grant: TokenGrant;
    let token: string;
    if (parts.length === 1) {
      if (role !== "admin" || rest !== item) fail("a role needs a tenant: role@tenant:token");
      token = rest;
      grant = { tenant: "default", role };
    } else {
      const [tenant, tok, ...who] = parts as [string, string, ...string[]];
      if (!TENANT.test(tenant)) fail(`tenant "${tenant}" must be 1–64 of A–Z a–z 0–9 _ . -`);
      if (!tok) fail("empty token");
      token = tok;
      grant = { tenant, role };
      if (who.length > 0) {
        const person = who.join(":").trim();
        if (person === "*") grant.integration = true;
        else {
          const problem = operatorNameProblem(person);
          if (problem) fail(`person: ${problem}`);
          grant.person = person;
        }
      }
    }
    if (!token) fail("empty token");
    const earlier = seen.get(token);
    if (earlier !== undefined) fail(`the same token as entry #${earlier}`);
    seen.set(token, n);
    map.set(token, grant);
  });
  return map.size ? map : null;
}

const TENANT = /^[A-Za-z0-9_.-]{1,64}$/;

/** An entry as an error message may show it: its role and tenant, never its token. */
function maskEntry(item: string): string {
  const colon = item.indexOf(":");
  return colon < 0 ? "a bare token" : `${item.slice(0, colon)}:…`;
}

export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  /**
   * The model roles the listed systems call (`modelRoles(dialogueSystems)`, passed by main.ts:
   * config does not import the systems, which import the gateway).
   */
  rolesInUse: readonly string[] = [],
): Config {
  // An empty value is an unset one (`PORT=` in an env file): its default, not a zero.
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ""));
  const parsed = envSchema.safeParse(given);
  if (!parsed.success) {
    const msg = parsed.error.issues
      .map((i) => {
        const key = String(i.path[0] ?? "");
        return `${key}${key in given ? `=${shown(key, given[key]!)}` : ""}: ${i.message}`;
      })
      .join("; ");
    throw new Error(`Invalid configuration: ${msg}`);
  }
  const e = parsed.data;
  if (e.SHUTDOWN_TIMEOUT_MS !== undefined && e.SHUTDOWN_TIMEOUT_MS <= e.SHUTDOWN_GRACE_MS)
    throw new Error(
      `Invalid configuration: SHUTDOWN_TIMEOUT_MS=${e.SHUTDOWN_TIMEOUT_MS} must be longer than SHUTDOWN_GRACE_MS=${e.SHUTDOWN_GRACE_MS} (the turns' grace is part of the shutdown).`,
    );
  checkRoleSettings(env, rolesInUse);
  // An unsigned webhook would let anyone who learns the URL forge escalations.
  if (e.WEBHOOK_URL && !e.WEBHOOK_SECRET)
    throw new Error(
      "Invalid configuration: WEBHOOK_URL is set but WEBHOOK_SECRET is not (deliveries are signed with it).",
    );
  // LLM_MODEL_<ROLE> for whatever roles the systems call (DialogueSystem.modelRoles): no list to keep here.
  const roleModels = Object.fromEntries(
    Object.entries(env).flatMap(([k, v]) =>
      /^LLM_MODEL_[A-Z0-9_]+$/.test(k) && v ? [[k.slice("LLM_MODEL_".length).toLowerCase(), v]] : [],
    ),
  );
  // A self-hosted or third-party endpoint has no "default model": sending OpenAI's name there
  // fails on every call. So a base URL needs LLM_MODEL, unless every role the systems call names its own.
  // Without the list, a base URL simply needs LLM_MODEL.
  const unnamed = rolesInUse.map((r) => r.toUpperCase()).filter((r) => !env[`LLM_MODEL_${r}`]);
  if (e.OPENAI_BASE_URL && !e.LLM_MODEL && (unnamed.length || rolesInUse.length === 0)) {
    throw new Error(
      `Invalid configuration: OPENAI_BASE_URL is set (${e.OPENAI_BASE_URL}) but LLM_MODEL is not, and no model is named for ${unnamed.map((r) => `LLM_MODEL_${r}`).join(", ")}. ` +
        "Set LLM_MODEL to the model your endpoint serves (e.g. deepseek-chat, llama3.1:8b), or LLM_MODEL_<ROLE> for every role.",
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    keepAliveMs: e.HTTP_KEEP_ALIVE_MS,
    databaseUrl: e.DATABASE_URL || undefined,
    databasePoolMax: e.DATABASE_POOL_MAX,
    databaseConnectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
    dataDir: e.DATA_DIR,
    llm: {
      baseURL: e.OPENAI_BASE_URL || undefined,
      apiKey: e.OPENAI_API_KEY || undefined,
      model: e.LLM_MODEL,
      roleModels,
      timeoutMs: e.LLM_TIMEOUT_MS,
      limits: {
        ...(e.LLM_MAX_REPLY_CHARS !== undefined && { maxReplyChars: e.LLM_MAX_REPLY_CHARS }),
        ...(e.LLM_TOTAL_TIMEOUT_MS !== undefined && { totalTimeoutMs: e.LLM_TOTAL_TIMEOUT_MS }),
      },
      roleLimits: modelLimitsPerRole(env),
      transport: e.LLM_FETCH,
    },
    docsDir: e.DOCS_DIR,
    aiDebug: e.AI_DEBUG,
    debugDir: e.DEBUG_DIR ?? (e.DATA_DIR.startsWith("memory://") ? "./.data/debug" : resolve(e.DATA_DIR, "debug")),
    tokens: parseTokens(e.API_TOKENS),
    conversations: { legacyAccess: e.CONVERSATION_LEGACY_ACCESS },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    detachGraceMs: e.RUN_DETACH_GRACE_MS,
    webhook: {
      url: e.WEBHOOK_URL || undefined,
      secret: e.WEBHOOK_SECRET || undefined,
      maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
      backoffMs: e.WEBHOOK_BACKOFF_MS,
      backoffMaxMs: Math.max(e.WEBHOOK_BACKOFF_MAX_MS, e.WEBHOOK_BACKOFF_MS),
      retryHorizonMs: e.WEBHOOK_RETRY_HORIZON_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    runs: { staleMs: e.RUN_STALE_MS, sweepMs: e.RUN_SWEEP_MS ?? Math.round(e.RUN_STALE_MS / 3) },
    desk: loadDeskConfig(env),
    deadlines: {
      commitMs: e.COMMIT_TIMEOUT_MS,
      closeMs: e.RUN_CLOSE_TIMEOUT_MS,
      sweepMs: e.SWEEP_TIMEOUT_MS,
      // The grace for running turns, their failure's record, the database's close, and a margin.
      shutdownMs: e.SHUTDOWN_TIMEOUT_MS ?? e.SHUTDOWN_GRACE_MS + 15_000,
    },
  };
}

/** Settings whose values are secrets (or hold one, as a URL's password): named, never echoed. */
const SECRET = /KEY|SECRET|TOKEN|PASSWORD|DATABASE_URL/;
const shown = (key: string, value: string) => (SECRET.test(key) ? "(hidden)" : JSON.stringify(value));

/**
 * A per-role setting names a role the systems call: `LLM_MODEL_ROUTR` (a typo) would otherwise be
 * ignored in silence and the router run on the default model. Checked when the roles are known.
 */
function checkRoleSettings(env: Record<string, string | undefined>, rolesInUse: readonly string[]): void {
  if (rolesInUse.length === 0) return;
  const roles = new Set(rolesInUse.map((r) => r.toUpperCase()));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || v === "") continue;
    const m = /^(LLM_MODEL|LLM_MAX_REPLY_CHARS|LLM_TOTAL_TIMEOUT_MS)_([A-Z0-9_]+)$/.exec(k);
    if (m && !roles.has(m[2]!))
      throw new Error(
        `Invalid configuration: ${k}: no model role ${m[2]} (the roles are ${[...roles].join(", ")}; e.g. ${m[1]}_${[...roles][0]}).`,
      );
  }
}

/** LLM_MAX_REPLY_CHARS_<ROLE> / LLM_TOTAL_TIMEOUT_MS_<ROLE>, for whatever roles the systems call; a bad value refuses to start. */
function modelLimitsPerRole(env: Record<string, string | undefined>): Partial<Record<Role, Partial<ModelLimits>>> {
  const out: Partial<Record<Role, Partial<ModelLimits>>> = {};
  for (const [k, raw] of Object.entries(env)) {
    const m = /^(LLM_MAX_REPLY_CHARS|LLM_TOTAL_TIMEOUT_MS)_([A-Z0-9_]+)$/.exec(k);
    if (!m || raw === undefined || raw === "") continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0)
      throw new Error(`Invalid configuration: ${k}: expected a positive integer, got ${raw}`);
    const role = m[2]!.toLowerCase() as Role;
    out[role] = { ...out[role], ...(m[1] === "LLM_MAX_REPLY_CHARS" ? { maxReplyChars: n } : { totalTimeoutMs: n }) };
  }
  return out;
}
