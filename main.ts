// The server's entry point (`npm start`) and composition root: the one place that puts the
// gateway (http/) and the dialogue systems (systems/index.ts) together, so neither imports the other's list.
import { loadConfig, loadDotEnv, type Config } from "./http/config";
import { createLogger, flushLog, logger, useLogger } from "./http/observability/logger";
import { createProgress } from "./http/observability/progress";
import { loadDemoKnowledgeBase } from "./systems/clinic/demo-kb";
import type { Database } from "./storage/db";
import { startupText } from "./http/pages";
import { startServer } from "./http/start";
import { armShutdownDeadline } from "./http/shutdown-deadline";
import { modelRoles } from "./driver/system";
import { dialogueSystems } from "./systems";

loadDotEnv();
// JSON lines on stdout at LOG_LEVEL (default info).
useLogger(createLogger());
let config: Config;
try {
  config = loadConfig(process.env, modelRoles(dialogueSystems));
} catch (e) {
  // A clear start-up error, on stderr as text and in the JSON log, then a non-zero exit.
  console.error(`could not start: ${(e as Error).message}`);
  logger.fatal({ event: "startup_failed", err: { message: (e as Error).message } }, "invalid configuration");
  process.exit(1);
}
const log = (line: string) => logger.info(line);
// A cold start (initdb, 40 migrations) takes a while: say what is happening, on stderr.
const progress = createProgress();
/**
 * A data directory created by this start gets the clinic's demo knowledge base, before the server
 * listens, so the README's first question is answered offline; never over an existing database
 * (systems/clinic/demo-kb.ts).
 */
async function demoData(db: Database): Promise<void> {
  if (!db.fresh || db.backend !== "pglite" || process.env.DEMO_DATA === "false") return;
  progress.step("loading the demo knowledge base");
  const n = await loadDemoKnowledgeBase(db.sql).catch((e: Error) => {
    progress.done();
    logger.warn({ event: "demo_data_failed", err: { message: e.message } }, "demo knowledge base not loaded");
    return 0;
  });
  // The live progress line is cleared before a log line, which would otherwise be written after it on the same line.
  progress.done();
  if (n)
    logger.info(
      { event: "demo_data_loaded", documents: n },
      `loaded ${n} demo knowledge-base documents (remove them in Settings)`,
    );
}
const started = await startServer(config, log, {
  systems: dialogueSystems,
  progress: progress.step,
  beforeListen: demoData,
}).catch((e: Error) => {
  progress.done();
  console.error(`could not start: ${e.message}`);
  logger.fatal({ event: "startup_failed", err: { message: e.message } }, "could not start");
  process.exit(1);
});
progress.done();
const where = started.deps.db.backend === "pglite" ? `embedded PGlite at ${config.dataDir}` : "PostgreSQL server";
logger.info(
  {
    event: "listening",
    url: started.url,
    database: started.deps.db.backend,
    model: started.deps.llm.offline ? "offline provider" : config.llm.baseURL,
  },
  `listening on ${started.url} (${where})`,
);
// For a person at the terminal: which pages to open and where the API document is (stderr, so
// stdout stays JSON lines).
console.error(startupText(started.url, where));

/**
 * SIGTERM/SIGINT: stop accepting, let running turns finish within SHUTDOWN_GRACE_MS, fail the
 * rest (`error` + `done`, nothing committed), close the database, exit 0. A second signal exits
 * at once; so does a shutdown past SHUTDOWN_TIMEOUT_MS (status 1, http/shutdown-deadline.ts). `npm start` runs node directly (no tsx watcher process between), so the signal
 * reaches this process.
 */
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info(
      {
        event: "shutdown",
        signal,
        graceMs: config.shutdownGraceMs,
        deadlineMs: config.deadlines.shutdownMs,
        running: started.deps.turns.size,
      },
      "shutting down",
    );
    // Past SHUTDOWN_TIMEOUT_MS the process exits anyway, saying what it was waiting on.
    const deadline = armShutdownDeadline(config.deadlines.shutdownMs, (p) =>
      logger.fatal(
        {
          event: "shutdown_timeout",
          deadlineMs: config.deadlines.shutdownMs,
          waitingOn: p.step,
          waitingMs: Date.now() - p.since,
          running: started.deps.turns.size,
        },
        `shutdown did not finish within ${config.deadlines.shutdownMs} ms (waiting on: ${p.step}); exiting`,
      ),
    );
    started.stop(config.shutdownGraceMs, deadline.step).then(
      async () => {
        logger.info({ event: "stopped" }, "stopped");
        await flushLog();
        process.exit(0);
      },
      async (e: Error) => {
        logger.error({ event: "shutdown_failed", err: { message: e.message } }, "shutdown failed");
        await flushLog();
        process.exit(1);
      },
    );
  });
}
