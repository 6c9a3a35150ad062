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
 * How long a line may wait for the lines after it before the gathered text goes to stdout. Every
 * write is a hand-off to the thread pool (a futex, an eventfd wake-up, a callback on the loop):
 * one per line cost ≈ 0.15 ms of CPU a line, all threads (bench/log-line.ts, doc/bench.md); one per
 * LOG_FLUSH_MS is shared by every line of those milliseconds.
 */
export const LOG_FLUSH_MS = 100;
/** Gathered text past this goes at once (sonic-boom's own largest write, 16 KiB). */
const HAND_OVER_CHARS = 16 * 1024;

/** A destination and how to empty it before a planned exit. */
export interface BufferedDestination {
  stream: DestinationStream;
  /** Writes what is gathered and waits for it, at most `ms` (asynchronously); true when written. */
  flushWithin(ms: number): Promise<boolean>;
}

/**
 * Lines for a file descriptor, gathered and written asynchronously: a line costs no system call of
 * its own. The first line into an empty buffer starts an unref'd timer of `flushMs`; when it fires
 * (or the gathered text passes 16 KiB) the text goes to sonic-boom as one piece, which writes it
 * on the thread pool at once or after the write in flight. Lines are whole strings appended in
 * order, so none is interleaved or cut; a partial write is continued by sonic-boom.
 * What is gathered is written: on a planned exit (flushWithin, main.ts's shutdown), when the loop
 * runs out of work ('beforeExit'), and synchronously on 'exit' (process.exit, an uncaught
 * exception) and on a fatal line (pino calls flushSync).
 * The trade-off: a process killed outright (SIGKILL, OOM killer, power) loses the lines of its last
 * `flushMs` as well as the write in flight — per-loop-turn writes lost only the last turn of the
 * event loop. A log is for diagnosis, not the record: the turn itself is committed before its
 * line is written, and a crash's own story is on the supervisor's side.
 */
export function bufferedDestination(fd: number, flushMs = LOG_FLUSH_MS): BufferedDestination {
  let gathered = "";
  let timer: NodeJS.Timeout | null = null;
  const handOver = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const text = gathered;
    gathered = "";
    if (text) out.write(text);
  };
  // Before pino's own hook (registered by pino.destination below), which flushes and ends the
  // stream when the loop runs dry: the unref'd timer does not keep the loop running, so the
  // gathered lines must reach the stream first.
  process.on("beforeExit", handOver);
  // A full pipe is waited out asynchronously (the lines are kept). A synchronous flush — pino's on
  // a fatal line and in its exit hook, ours at exit — gets EXIT_FLUSH_MS: sonic-boom's
  // flushSync retries EAGAIN forever, sleeping on the main thread, so a server whose log reader
  // stopped reading (a supervisor, a test runner done with it) never exited on SIGTERM, nor on a
  // second one (issue 47: 50 minutes). And while a write is still in flight (the pipe is full) it
  // is skipped: on a blocking pipe a synchronous write would wait in the kernel for good.
  let syncBy = Infinity;
  const out = pino.destination({ dest: fd, sync: false, retryEAGAIN: () => Date.now() < syncBy });
  const flushSyncUnbounded = out.flushSync.bind(out);
  out.flushSync = () => {
    if ((out as unknown as { _writing?: boolean })._writing) return;
    syncBy = Date.now() + EXIT_FLUSH_MS;
    try {
      flushSyncUnbounded();
    } catch {
      // Nobody reads the descriptor: the lines are lost rather than the process.
    } finally {
      syncBy = Infinity;
    }
  };
  // The gathered text of a synchronous flush goes into sonic-boom's buffer without starting an
  // asynchronous write (a write in flight makes out.flushSync skip, and the process would exit or
  // be killed with the lines on the thread pool), then out synchronously.
  const handOverSync = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const text = gathered;
    gathered = "";
    if (!text) return;
    const s = out as unknown as { minLength: number };
    const min = s.minLength;
    s.minLength = Infinity;
    try {
      out.write(text);
    } finally {
      s.minLength = min;
    }
  };
  process.on("exit", () => {
    handOverSync();
    out.flushSync();
  });
  // sonic-boom's flush(cb) answers at once with no minLength, write in flight or not; its 'drain'
  // comes when everything handed to it is written.
  const idle = (cb: (err?: Error) => void) => {
    const s = out as unknown as { _writing?: boolean; _len?: number };
    if (!s._writing && !s._len) return cb();
    const onError = (e: Error) => (out.off("drain", onDrain), cb(e));
    const onDrain = () => (out.off("error", onError), cb());
    out.once("drain", onDrain);
    out.once("error", onError);
  };
  const stream = {
    write(line: string) {
      gathered += line;
      if (gathered.length >= HAND_OVER_CHARS) handOver();
      else if (!timer) {
        timer = setTimeout(handOver, flushMs);
        timer.unref();
      }
    },
    flush: (cb?: (err?: Error) => void) => (handOver(), idle(cb ?? (() => {}))),
    flushSync: () => (handOverSync(), out.flushSync()),
  } as DestinationStream;
  return {
    stream,
    flushWithin: (ms) =>
      new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), ms);
        t.unref();
        handOver();
        idle((err) => (clearTimeout(t), resolve(!err)));
      }),
  };
}

/** The server's stdout, and the flush a planned exit waits for (flushLog). */
function stdoutBuffered(): DestinationStream {
  const d = bufferedDestination(1);
  flushBeforeExit = d.flushWithin;
  return d.stream;
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
    destination ?? (level === "silent" ? undefined : format === "pretty" ? prettyStdout() : stdoutBuffered()),
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
