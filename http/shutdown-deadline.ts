import { Worker } from "node:worker_threads";

/** What a shutdown is doing now, for the line logged when it runs past its deadline. */
export interface ShutdownProgress {
  step: string;
  since: number;
}

/**
 * The deadline of a shutdown (issue 47: a server on SIGTERM still running 50 minutes later,
 * deaf to a second SIGTERM). Two guards:
 *
 * - at `ms`, a timer on the main thread calls `onLate` (which logs what the shutdown waits on)
 *   and exits with status 1;
 * - `WATCHDOG_MARGIN_MS` later, a worker thread — which runs whatever the main thread does —
 *   writes the last step it was told to stderr and kills the process (SIGKILL). It is what ends a
 *   main thread that never returns to its event loop: a synchronous write to a full pipe, a
 *   spin inside the embedded database, the cause found in that incident (a log flush at exit
 *   retrying a full stdout forever, http/observability/logger.ts).
 *
 * Returns `step(name)` to record progress (sent to the worker too) and `disarm()`.
 */
export function armShutdownDeadline(
  ms: number,
  onLate: (progress: ShutdownProgress) => void,
): { step(name: string): void; disarm(): void } {
  const progress: ShutdownProgress = { step: "starting", since: Date.now() };
  const timer = setTimeout(() => {
    try {
      onLate(progress);
    } finally {
      process.exit(1);
    }
  }, ms);
  timer.unref();
  let watchdog: Worker | null = null;
  try {
    watchdog = new Worker(WATCHDOG, { eval: true, workerData: { ms: ms + WATCHDOG_MARGIN_MS, pid: process.pid } });
    watchdog.unref();
    watchdog.on("error", () => {});
  } catch {
    // No worker (a restricted runtime): the main thread's timer alone.
  }
  return {
    step(name: string) {
      progress.step = name;
      progress.since = Date.now();
      watchdog?.postMessage(name);
    },
    disarm() {
      clearTimeout(timer);
      void watchdog?.terminate();
      watchdog = null;
    },
  };
}

/** After the main thread's own deadline: room for its exit (the log's last lines get 1 s). */
export const WATCHDOG_MARGIN_MS = 3_000;

// Plain JavaScript, evaluated in the worker. Its stderr write is asynchronous with a short wait,
// so a full stderr pipe cannot hold it either.
const WATCHDOG = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
let step = "starting";
parentPort.on("message", (s) => { step = String(s); });
setTimeout(() => {
  const line = JSON.stringify({ level: "fatal", event: "shutdown_watchdog", step, deadlineMs: workerData.ms,
    msg: "shutdown did not finish and the main thread did not exit: killing the process" }) + "\\n";
  fs.write(2, line, () => process.kill(workerData.pid, "SIGKILL"));
  setTimeout(() => process.kill(workerData.pid, "SIGKILL"), 200);
}, workerData.ms);
`;
