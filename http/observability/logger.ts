import type { Context } from "hono";
import pino, { type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";

/**
 * Structured JSON logs (pino), one object per line. The ids of the request being served
 * (request, tenant, and once a turn starts its run, conversation and system) travel as an
 * explicit context object: the request middleware puts it on Hono's context, a run's abort
 * signal is bound to it (so a model call deep inside a turn, handed only the signal, logs the
 * ids too). Not AsyncLocalStorage: on Node 20 it installs promise hooks that every promise of
 * the process then pays for (about a sixth of a streamed turn's CPU, doc/bench.md).
 * Nothing secret is logged: no headers, no prompts or user text, provider errors already
 * redacted (llm/openai-client.ts); `redactLine` below is a second line for fields that
 * must never appear even if someone adds them to a log call.
 */
export interface LogContext {
  requestId?: string;
  tenantId?: string;
  runId?: string;
  conversationId?: string;
  system?: string;
}

/** What the request middleware puts on a request (http/roles.ts's AuthEnv carries it). */
export type LogEnv = { Variables: { log: LogContext } };

/** Fields never logged: at the top of a line or one level down (`err.token`, `request.authorization`). */
const SECRET_FIELDS = new Set(["authorization", "apiKey", "api_key", "token", "password"]);
const CENSOR = "[redacted]";

/**
 * A line's fields with the secret ones censored (and `headers` whole), copying only when one is
 * there. pino's own `redact` deep-copies every line it is given — measured at a seventh of all
 * the allocations of a streamed turn (four lines) — for paths that almost never hold anything.
 */
export function redactLine(line: Record<string, unknown>): Record<string, unknown> {
  let out = line;
  const set = (k: string, v: unknown) => {
    if (out === line) out = { ...line };
    out[k] = v;
  };
  for (const k in line) {
    const v = line[k];
    if (k === "headers" || SECRET_FIELDS.has(k)) {
      set(k, CENSOR);
      continue;
    }
    // Plain objects only: errors are logged as `describe(e)` objects (http/sse.ts), arrays as lists.
    if (v === null || typeof v !== "object" || Array.isArray(v) || Object.getPrototypeOf(v) !== Object.prototype)
      continue;
    let inner: Record<string, unknown> | null = null;
    for (const ik in v as Record<string, unknown>) {
      if (!SECRET_FIELDS.has(ik)) continue;
      inner ??= { ...(v as Record<string, unknown>) };
      inner[ik] = CENSOR;
    }
    if (inner) set(k, inner);
  }
  return out;
}

/**
 * Stdout for the server's own lines, gathered per turn of the event loop: a line handed to the
 * stream alone is one `fs.write` on the thread pool (a hand-off, an eventfd wake-up and a futex
 * each), about a tenth of a turn's CPU for its four lines. Lines written in one turn of the loop
 * go to the stream as one piece at its end (setImmediate), so none waits longer than that; the
 * stream writes it at once, or after the write in flight. A line still gathered when the process
 * exits (a fatal line before process.exit) is written synchronously.
 */
function stdoutPerLoopTurn(): DestinationStream {
  // A full stdout pipe is waited out asynchronously (the lines are kept). A synchronous flush —
  // pino's on a fatal line and in its exit hook, ours at exit — gets EXIT_FLUSH_MS: sonic-boom's
  // flushSync retries EAGAIN forever, sleeping on the main thread, so a server whose log reader
  // stopped reading (a supervisor, a test runner done with it) never exited on SIGTERM, nor on a
  // second one (issue 47: 50 minutes). And while a write is still in flight (the pipe is full) it
  // is skipped: on a blocking pipe a synchronous write would wait in the kernel for good.
  let syncBy = Infinity;
  const out = pino.destination({ dest: 1, sync: false, retryEAGAIN: () => Date.now() < syncBy });
  const flushSyncUnbounded = out.flushSync.bind(out);
  out.flushSync = () => {
    if ((out as unknown as { _writing?: boolean })._writing) return;
    syncBy = Date.now() + EXIT_FLUSH_MS;
    try {
      flushSyncUnbounded();
    } catch {
      // Nobody reads stdout: the lines are lost rather than the process.
    } finally {
      syncBy = Infinity;
    }
  };
  let gathered = "";
  const handOver = () => {
    const text = gathered;
    gathered = "";
    if (text) out.write(text);
  };
  process.on("exit", () => {
    handOver();
    out.flushSync();
  });
  const stream = out;
  flushBeforeExit = (ms) =>
    new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), ms);
      t.unref();
      handOver();
      stream.flush((err) => (clearTimeout(t), resolve(!err)));
    });
  return {
    write(line: string) {
      if (!gathered) setImmediate(handOver);
      gathered += line;
    },
    flush: (cb?: (err?: Error) => void) => (handOver(), stream.flush(cb)),
    flushSync: () => (handOver(), stream.flushSync()),
  } as DestinationStream;
}

/** How long an exiting process may wait for a full stdout pipe to take its last log lines. */
export const EXIT_FLUSH_MS = 1_000;

let flushBeforeExit: ((ms: number) => Promise<boolean>) | null = null;

/**
 * Writes the log's gathered lines, waiting at most `ms` (asynchronously: a stdout nobody reads
 * cannot hold the process). True when they were written. Called before a planned exit.
 */
export function flushLog(ms = EXIT_FLUSH_MS): Promise<boolean> {
  return flushBeforeExit ? flushBeforeExit(ms) : Promise.resolve(true);
}

/**
 * How the server's own lines look: `pretty` (pino-pretty: time, level, message, the fields on one
 * line) for a person at a terminal, `json` (one object per line) for anything that reads them —
 * a log shipper, a container runtime, the tests. LOG_FORMAT picks one; unset, a terminal on
 * stdout gets `pretty` and anything else `json`, so a redirected or piped log stays JSON.
 */
export function logFormat(
  env: Record<string, string | undefined> = process.env,
  stdoutIsTTY = process.stdout.isTTY === true,
): "json" | "pretty" {
  const f = env.LOG_FORMAT?.trim().toLowerCase();
  if (f === "json" || f === "pretty") return f;
  return stdoutIsTTY ? "pretty" : "json";
}

/** Readable lines on stdout, written synchronously (a terminal is read by a person, not measured). */
function prettyStdout(): DestinationStream {
  return pretty({
    colorize: true,
    translateTime: "SYS:HH:MM:ss",
    ignore: "pid,hostname,service",
    singleLine: true,
    sync: true,
  }) as DestinationStream;
}

export function createLogger(
  destination?: DestinationStream,
  level = process.env.LOG_LEVEL || "info",
  format: "json" | "pretty" = destination ? "json" : logFormat(),
): Logger {
  return pino(
    {
      level,
      base: { service: "dialogue-statecharts" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: redactLine },
    },
    destination ?? (level === "silent" ? undefined : format === "pretty" ? prettyStdout() : stdoutPerLoopTurn()),
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

/**
 * A line's fields with the context's ids first (the order the former mixin gave them); a field
 * of the line wins over the context's.
 */
export function withIds<T extends object>(ctx: LogContext | undefined, fields: T): T {
  return ctx ? { ...ctx, ...fields } : fields;
}

/** The request's log context (set by the request middleware; absent in an app built without it). */
export function requestLogContext(c: Context): LogContext | undefined {
  return (c as Context<LogEnv>).get("log");
}

const bySignal = new WeakMap<AbortSignal, LogContext>();

/** Ties a run's abort signal to its log context: whatever is handed the signal logs the run's ids. */
export function bindLogContext(signal: AbortSignal, ctx: LogContext): void {
  bySignal.set(signal, ctx);
}

export function logContextOf(signal: AbortSignal | undefined): LogContext | undefined {
  return signal ? bySignal.get(signal) : undefined;
}
