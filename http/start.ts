import { randomUUID } from "node:crypto";
import { serve, type ServerType } from "@hono/node-server";
import { RunHub } from "../driver/hub";
import { createLlm, type Llm } from "../llm/client";
import { conversationKinds } from "../driver/system";
import { registerConversationKinds } from "../storage/conversation-kinds";
import { openDatabase, type Database } from "../storage/db";
import { withinDeadline } from "../storage/deadline";
import { localWake } from "../storage/local-wake";
import { failAbandonedRuns, touchRuns } from "../storage/runs";
import { ActiveTurns } from "./active-turns";
import { createApp } from "./app";
import { observeLlm } from "./observability/observed-llm";
import { isLoopback } from "./auth";
import type { Config } from "./config";
import type { Deps, HttpDialogueSystem } from "./deps";
import { RunWaker } from "./run-waker";
import { WebhookDispatcher } from "./webhook";
import { startDeskTimers } from "./desk-timers";
import { presenceOf } from "./presence";

export interface Started {
  deps: Deps;
  server: ServerType;
  url: string;
  /**
   * Stops listening, lets running turns finish within `graceMs` (default 0: stop them at once),
   * fails the rest with `error` + `done`, then closes the database.
   */
  stop(graceMs?: number, onStep?: (step: string) => void): Promise<void>;
}

/** Builds the dependencies and listens; used by main and by tests that need a real server. */
export interface StartOptions {
  /** Use this database instead of opening one (tests share one per file); it is not closed on stop. */
  db?: Database;
  /** Extra route registrations (tests mount small machines this way). */
  extend?: (app: ReturnType<typeof createApp>, deps: Deps) => void;
  /** Use this model client instead of building one from the config (benchmarks inject an in-process model). */
  llm?: Llm;
  /** The dialogue systems to serve: systems/index.ts's list (main.ts), or a test's. */
  systems: readonly HttpDialogueSystem[];
  /** Told each slow start-up step (initdb, migrations): main.ts's progress line. */
  progress?: (step: string) => void;
  /** Runs on the opened, migrated database before the server listens (main.ts: the demo data of a fresh install). */
  beforeListen?: (db: Database) => Promise<void>;
}

export async function startServer(
  config: Config,
  log: (line: string) => void = (l) => console.log(l),
  opts: StartOptions,
): Promise<Started> {
  if (!config.tokens && !isLoopback(config.host)) {
    throw new Error(
      `API_TOKENS is not set: the API is open, so it may only listen on loopback (HOST=${config.host}). Set API_TOKENS or HOST=127.0.0.1.`,
    );
  }
  const db =
    opts.db ??
    (await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      max: config.databasePoolMax,
      onProgress: opts.progress,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
    }));
  try {
    // The database accepts the conversation kinds of the systems served (and no others).
    await registerConversationKinds(db.sql, conversationKinds(opts.systems));
    await opts.beforeListen?.(db);
  } catch (e) {
    if (!opts.db) await db.close();
    throw e;
  }
  const instanceId = randomUUID();
  // Embedded: one process owns the database, so any run still "running" died with the last one.
  const closed = await failAbandonedRuns(
    db.sql,
    db.backend === "pglite" ? { staleAfterMs: 0 } : { staleAfterMs: config.runs.staleMs, exceptOwner: instanceId },
  );
  if (closed.length) log(`closed ${closed.length} run(s) abandoned by a stopped process`);
  const llm = observeLlm(opts.llm ?? createLlm({ ...config.llm, roleModels: config.llm.roleModels }, log));
  const hub = new RunHub();
  const waker = new RunWaker(db);
  const webhook = new WebhookDispatcher(db, config.webhook, log);
  const turns = new ActiveTurns();
  const deps: Deps = { db, llm, config, hub, waker, instanceId, log, webhook, turns, systems: opts.systems };
  const app = createApp(deps);
  opts.extend?.(app, deps);
  // Beats well inside the stale window, so a live run is never taken for dead by a sweep (every
  // 5 s at the default RUN_STALE_MS; a longer window beats less often).
  const heartbeat = setInterval(
    () => void touchRuns(db.sql, hub.liveIds(), { asyncCommit: db.backend === "postgres" }).catch(() => {}),
    Math.max(100, Math.floor(config.runs.staleMs / 3)),
  );
  heartbeat.unref();
  const sweeper = startRunSweep(db, hub, config.runs, config.deadlines.sweepMs, log);
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => {
        s.off("error", reject);
        resolve(s);
      });
      s.once("error", reject);
      // Idle kept-alive sockets stay open for config.keepAliveMs (see Config); the headers of a
      // request on such a socket may take as long (Node's advice: headersTimeout above it).
      const http = s as unknown as { keepAliveTimeout: number; headersTimeout: number };
      http.keepAliveTimeout = config.keepAliveMs;
      http.headersTimeout = Math.max(http.headersTimeout, config.keepAliveMs + 1_000);
    });
  } catch (e) {
    clearInterval(heartbeat);
    await sweeper.stop();
    if (!opts.db) await db.close();
    throw listenError(e as NodeJS.ErrnoException, config);
  }
  webhook.start();
  const desk = startDeskTimers(deps);
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  return {
    deps,
    server,
    url,
    async stop(graceMs = 0, onStep = () => {}) {
      // Keep listening while the turns drain: /readyz answers 503 and new /v1 requests get a
      // structured 503 (turns.draining), so a load balancer tells draining from dead (a refused
      // connection). Only then stop accepting; busy sockets go when their response ends.
      // Each step is named (onStep) so a shutdown past its deadline says what it waited on.
      onStep(`draining ${turns.size} running turn(s)`);
      const drained = await turns.drain(graceMs, config.deadlines.closeMs);
      const closed = new Promise<void>((r) => server.close(() => r()));
      (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      if (drained.finished || drained.stopped)
        log(`shutdown: ${drained.finished} turn(s) finished, ${drained.stopped} stopped after ${graceMs} ms`);
      clearInterval(heartbeat);
      onStep("stopping the run sweep");
      await sweeper.stop();
      await desk.stop();
      presenceOf(deps).stop();
      onStep("stopping the webhook dispatcher");
      await webhook.stop();
      onStep("closing the LISTEN connection");
      await waker.close();
      // Followers' streams and anything else still open: their runs have ended by now.
      onStep("closing client connections");
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await closed;
      onStep("closing the database");
      if (!opts.db) await db.close();
      onStep("stopped");
    },
  };
}

/**
 * Every process closes runs abandoned by a dead one (kill -9, a lost machine), or stranded by
 * itself (a failure it could not record), every `sweepMs`, each sweep bounded by `deadlineMs`:
 * one statement over the partial index of running runs (storage/runs.ts failAbandonedRuns),
 * which also stores their `error` + `done`. Without it, on a shared PostgreSQL server such a run
 * stayed `running` until a follower resumed it or a process started. Embedded PGlite closes them
 * all at start-up (one process owns the folder); the sweep finds nothing there, harmlessly.
 * A sweep never overlaps the previous one, and the timer does not keep the process alive.
 */
function startRunSweep(
  db: Database,
  hub: RunHub,
  runs: Config["runs"],
  deadlineMs: number,
  log: (line: string) => void,
): { stop(): Promise<void> } {
  let inFlight: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (inFlight) return;
    // This process's runs too (issue 47): a run whose failure could not be recorded while the
    // database was away is no longer live here, and nobody else would ever close it. Only the
    // runs this process is running now are spared; a stranded one is as silent as a dead one's.
    inFlight = withinDeadline(
      deadlineMs,
      "run sweep",
      failAbandonedRuns(db.sql, { staleAfterMs: runs.staleMs, exceptIds: hub.liveIds() }),
    )
      .then(
        (ids) => {
          for (const id of ids) localWake(db.sql, id);
          if (ids.length) log(`sweep: closed ${ids.length} run(s) abandoned by a stopped process: ${ids.join(", ")}`);
        },
        // A failed or late sweep (database away, a lock timeout) is retried by the next one.
        () => {},
      )
      .finally(() => (inFlight = null));
  }, runs.sweepMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
    },
  };
}

/** A listen failure as one line that says what to do, not a stack (main.ts prints it and exits 1). */
export function listenError(e: NodeJS.ErrnoException, config: Pick<Config, "host" | "port">): Error {
  const where = `${config.host}:${config.port}`;
  if (e.code === "EADDRINUSE")
    return new Error(
      `port ${config.port} is already in use on ${config.host} (another server running?). Stop it or start with another port, e.g. PORT=${config.port + 1} npm start.`,
    );
  if (e.code === "EACCES") return new Error(`no permission to listen on ${where}; use a port above 1023 (PORT=3000).`);
  if (e.code === "EADDRNOTAVAIL") return new Error(`HOST=${config.host} is not an address of this machine.`);
  return new Error(`could not listen on ${where}: ${e.message}`);
}

/** The banner (http/pages.ts holds the list of pages it prints). */
export { startupText } from "./pages";
