import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import type { ModelLimits, Role } from "../llm/types";

const roles = ["ROUTER", "BRANCH", "PLANNER", "RERANKER", "CLASSIFIER", "ANSWER"] as const;

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("127.0.0.1"),
  DATABASE_URL: z.string().optional(),
  DATA_DIR: z.string().default("./.data"),
  OPENAI_BASE_URL: z.string().optional(),
  OPENAI_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  LLM_MAX_REPLY_CHARS: z.coerce.number().int().positive().optional(),
  LLM_TOTAL_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  DOCS_DIR: z.string().optional(),
  AI_DEBUG: z.enum(["true", "false", "1", "0", ""]).default("false").transform((v) => v === "true" || v === "1"),
  DEBUG_DIR: z.string().optional(),
  API_TOKENS: z.string().optional(),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(2 * 1024 * 1024),
  RUN_DETACH_GRACE_MS: z.coerce.number().int().min(0).default(5_000),
});

export interface Config {
  port: number;
  host: string;
  databaseUrl?: string;
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
  };
  docsDir?: string;
  aiDebug: boolean;
  debugDir: string;
  /** token → tenant; null = open (only allowed on loopback). */
  tokens: Map<string, string> | null;
  bodyLimitBytes: number;
  /** How long a run whose client left keeps going, waiting for a Last-Event-ID follower. */
  detachGraceMs: number;
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

export function parseTokens(spec: string | undefined): Map<string, string> | null {
  if (!spec || !spec.trim()) return null;
  const map = new Map<string, string>();
  for (const item of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    const i = item.indexOf(":");
    if (i > 0) map.set(item.slice(i + 1), item.slice(0, i));
    else map.set(item, "default");
  }
  return map;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`Invalid configuration: ${msg}`);
  }
  const e = parsed.data;
  const roleModels = Object.fromEntries(roles.map((r) => [r.toLowerCase(), env[`LLM_MODEL_${r}`] || undefined]));
  const positive = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === "") return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`Invalid configuration: ${name}: expected a positive integer, got ${raw}`);
    return n;
  };
  const roleLimits: Partial<Record<Role, Partial<ModelLimits>>> = {};
  for (const r of roles) {
    const maxReplyChars = positive(`LLM_MAX_REPLY_CHARS_${r}`);
    const totalTimeoutMs = positive(`LLM_TOTAL_TIMEOUT_MS_${r}`);
    if (maxReplyChars !== undefined || totalTimeoutMs !== undefined) roleLimits[r.toLowerCase() as Role] = { ...(maxReplyChars !== undefined && { maxReplyChars }), ...(totalTimeoutMs !== undefined && { totalTimeoutMs }) };
  }
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL || undefined,
    dataDir: e.DATA_DIR,
    llm: { baseURL: e.OPENAI_BASE_URL || undefined, apiKey: e.OPENAI_API_KEY || undefined, model: e.LLM_MODEL, roleModels, timeoutMs: e.LLM_TIMEOUT_MS,
      limits: { ...(e.LLM_MAX_REPLY_CHARS !== undefined && { maxReplyChars: e.LLM_MAX_REPLY_CHARS }), ...(e.LLM_TOTAL_TIMEOUT_MS !== undefined && { totalTimeoutMs: e.LLM_TOTAL_TIMEOUT_MS }) }, roleLimits },
    docsDir: e.DOCS_DIR,
    aiDebug: e.AI_DEBUG,
    debugDir: e.DEBUG_DIR ?? (e.DATA_DIR.startsWith("memory://") ? "./.data/debug" : resolve(e.DATA_DIR, "debug")),
    tokens: parseTokens(e.API_TOKENS),
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    detachGraceMs: e.RUN_DETACH_GRACE_MS,
  };
}
