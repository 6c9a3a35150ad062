import { spawn } from "node:child_process";
import { relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * What the server's log line costs in CPU, alone:
 *   node --import tsx bench/log-line.ts [lines] [every ms] [another logger.ts …]
 * (another logger.ts: a former version of http/observability/logger.ts, e.g. from `git show`, saved
 * inside the repository so that it finds pino — measured in the same rounds.)
 * A child process logs a turn's line (the fields of http/sse.ts's `turn` line, two model calls)
 * through the real logger (createLogger, JSON to its stdout, a pipe this process reads and throws
 * away), one line every `every` ms from a timer, as a server with turns in flight does; then the
 * same schedule with the logger silent. The difference of the child's CPU (process.cpuUsage: every
 * thread, the thread pool's writes included; process.threadCpuUsage: the main thread) divided by
 * the lines is the line's cost. CPU, not wall time: the machine it runs on is shared. Five rounds,
 * each running every logger and the silent one back to back; the median printed.
 */

interface Usage {
  all: number;
  main: number;
}

const self = fileURLToPath(import.meta.url);
/** Node ≥ 23.9 has it; @types/node here does not declare it yet. */
const threadCpu = (since?: NodeJS.CpuUsage): NodeJS.CpuUsage =>
  (process as unknown as { threadCpuUsage(p?: NodeJS.CpuUsage): NodeJS.CpuUsage }).threadCpuUsage(since);

const ours = fileURLToPath(new URL("../http/observability/logger.ts", import.meta.url));

function child(lines: number, everyMs: number, level: string, module: string): Promise<Usage> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", self, "--child", String(lines), String(everyMs), module], {
      env: { ...process.env, LOG_LEVEL: level, LOG_FORMAT: "json" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    p.stdout.on("data", () => {});
    p.stderr.on("data", (d) => (err += d));
    p.on("exit", (code) => {
      const m = err.match(/^usage (.*)$/m);
      if (code !== 0 || !m) reject(new Error(`child exited ${code}: ${err}`));
      else resolve(JSON.parse(m[1]!) as Usage);
    });
  });
}

async function runChild(lines: number, everyMs: number, module: string): Promise<void> {
  const { createLogger } = (await import(pathToFileURL(module).href)) as typeof import("../http/observability/logger");
  const logger = createLogger();
  const ids = {
    requestId: "3f1c2a9e-5b7d-4e21-9c1a-0d2b8e6f4a11",
    tenantId: "default",
    runId: "7a9d1e2c-4b6f-4a83-8e1d-2c5f9b0a7d36",
    conversationId: "c2e4a6b8-1d3f-4a5c-9e7b-0f1a2b3c4d5e",
    system: "clinic",
  };
  const call = (role: string) => ({
    role,
    model: "scripted",
    kind: "chat",
    latencyMs: 12,
    attempts: 1,
    retried: false,
    promptTokens: 812,
    completionTokens: 64,
    outcome: "ok",
  });
  // A warm-up outside the measure: the first lines compile pino's serialisers.
  for (let i = 0; i < 200; i++) logger.info({ ...ids, event: "warm", i }, "warm");
  await new Promise((r) => setTimeout(r, 300));
  const c0 = process.cpuUsage();
  const m0 = threadCpu();
  for (let i = 0; i < lines; i++) {
    await new Promise((r) => setTimeout(r, everyMs));
    logger.info(
      {
        ...ids,
        event: "turn",
        status: "done",
        outcome: "answered",
        latencyMs: 40 + (i % 7),
        events: 3,
        request: {
          method: "POST",
          route: "/v1/clinic/threads/:id/messages",
          path: "/v1/clinic/threads/x/messages",
          status: 200,
          latencyMs: 3,
        },
        modelCalls: [call("router"), call("branch")],
      },
      "turn",
    );
  }
  // The lines still gathered are written before the figure is taken: their writes count.
  await new Promise<void>((r) => logger.flush(() => r()));
  const c = process.cpuUsage(c0);
  const m = threadCpu(m0);
  process.stderr.write(`usage ${JSON.stringify({ all: c.user + c.system, main: m.user + m.system })}\n`);
}

async function main(): Promise<void> {
  const lines = Number(process.argv[2] ?? 3000);
  const everyMs = Number(process.argv[3] ?? 4);
  const modules = [ours, ...process.argv.slice(4).map((m) => resolve(m))];
  const per = modules.map(() => [] as Usage[]);
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const f = (u: Usage) => `${u.all.toFixed(1)} µs (main ${u.main.toFixed(1)})`;
  for (let round = 0; round < 5; round++) {
    const off = await child(lines, everyMs, "silent", ours);
    for (const [i, m] of modules.entries()) {
      const on = await child(lines, everyMs, "info", m);
      per[i]!.push({ all: (on.all - off.all) / lines, main: (on.main - off.main) / lines });
      console.log(`round ${round + 1}, ${relative(process.cwd(), m)}: the line ${f(per[i]!.at(-1)!)}`);
    }
    console.log(
      `round ${round + 1}, silent: ${f({ all: off.all / lines, main: off.main / lines })} per scheduled line`,
    );
  }
  for (const [i, m] of modules.entries())
    console.log(
      `${relative(process.cwd(), m)}: ${lines} lines, one every ${everyMs} ms; the line's CPU, median of 5: ${f({ all: med(per[i]!.map((p) => p.all)), main: med(per[i]!.map((p) => p.main)) })}`,
    );
}

if (process.argv[2] === "--child") await runChild(Number(process.argv[3]), Number(process.argv[4]), process.argv[5]!);
else await main();
