import { AsyncLocalStorage } from "node:async_hooks";
import pino, { type DestinationStream, type Logger } from "pino";

/**
 * Structured JSON logs (pino), one object per line. The ids of the request being served
 * (request, tenant, and once a turn starts its run, conversation and system) come from an
 * async-local context, so a model call deep inside a turn logs them without being handed them.
 * Nothing secret is logged: no headers, no prompts or user text, provider errors already
 * redacted (llm/openai-client.ts); the redact paths below are a second line for fields that
 * must never appear even if someone adds them to a log call.
 */
export interface LogContext {
  requestId?: string;
  tenantId?: string;
  runId?: string;
  conversationId?: string;
  system?: string;
}

const context = new AsyncLocalStorage<LogContext>();

const REDACT = [
  "authorization",
  "apiKey",
  "api_key",
  "token",
  "password",
  "*.authorization",
  "*.apiKey",
  "*.api_key",
  "*.token",
  "*.password",
  "headers",
];

export function createLogger(destination?: DestinationStream, level = process.env.LOG_LEVEL || "info"): Logger {
  return pino(
    {
      level,
      base: { service: "dialogue-statecharts" },
      redact: { paths: REDACT, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => ({ ...context.getStore() }),
    },
    destination,
  );
}

/**
 * The process's logger. Silent until the server's entry point (main.ts) turns it on, so an
 * in-process server (benchmarks, the eval runner, tests) prints nothing of its own; tests that
 * read the lines install one writing to memory (useLogger).
 */
export let logger: Logger = createLogger(undefined, "silent");

export function useLogger(l: Logger): void {
  logger = l;
}

/** Runs `fn` with a fresh log context (one per request). */
export function withLogContext<T>(ctx: LogContext, fn: () => T): T {
  return context.run(ctx, fn);
}

/** Adds ids to the current context (a turn adds its run and conversation). */
export function addLogContext(fields: LogContext): void {
  const store = context.getStore();
  if (store) Object.assign(store, fields);
}

export const logContext = () => context.getStore();
