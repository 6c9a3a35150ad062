import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bufferedDestination, createLogger } from "../../../http/observability/logger";

/**
 * The server's log destination: lines gathered and written together, off the line's own path,
 * and still every line written on each way a process ends except a kill outright.
 */

const dir = mkdtempSync(join(tmpdir(), "log-dest-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `out-${n++}.log`);
const lines = (text: string) => text.split("\n").filter(Boolean);

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("bufferedDestination", () => {
  it("writes nothing per line: the lines wait for the timer or a flush, then go whole and in order", async () => {
    const path = file();
    const fd = openSync(path, "w");
    const d = bufferedDestination(fd, 60_000);
    const log = createLogger(d.stream, "info");
    for (let i = 0; i < 3; i++) log.info({ i, text: "строка ".repeat(20) }, "line");
    // Several turns of the event loop: a per-line or per-loop-turn write would have landed by now.
    await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(path, "utf8")).toBe("");
    expect(await d.flushWithin(5_000)).toBe(true);
    const out = lines(readFileSync(path, "utf8")).map((l) => JSON.parse(l) as { i: number; text: string });
    expect(out.map((l) => l.i)).toEqual([0, 1, 2]);
    expect(out.every((l) => l.text === "строка ".repeat(20))).toBe(true);
    closeSync(fd);
  });

  it("writes the gathered lines when the timer fires, and at once past 16 KiB", async () => {
    const path = file();
    const fd = openSync(path, "w");
    const timed = createLogger(bufferedDestination(fd, 30).stream, "info");
    timed.info({ event: "a" }, "a");
    await until(() => lines(readFileSync(path, "utf8")).length === 1);

    const big = file();
    const bigFd = openSync(big, "w");
    const sized = createLogger(bufferedDestination(bigFd, 60_000).stream, "info");
    const pad = "x".repeat(1_000);
    for (let i = 0; i < 20; i++) sized.info({ i, pad }, "big");
    // Each line ≈ 1.1 KB: the 15th passes 16 KiB and takes the gathered lines with it.
    await until(() => lines(readFileSync(big, "utf8")).length >= 10);
    const got = lines(readFileSync(big, "utf8")).map((l) => (JSON.parse(l) as { i: number }).i);
    expect(got).toEqual(got.map((_, i) => i));
    closeSync(fd);
    closeSync(bigFd);
  });

  // A process of its own per way out: the destination hooks the process's exit.
  const logger = resolve("http/observability/logger.ts");
  const script = (end: string) => {
    const path = join(dir, `child-${n++}.mts`);
    writeFileSync(
      path,
      `import { openSync } from "node:fs";
import { bufferedDestination, createLogger } from ${JSON.stringify(logger)};
const log = createLogger(bufferedDestination(openSync(process.argv[2], "w"), 60_000).stream, "info");
for (let i = 0; i < 3; i++) log.info({ i }, "line");
${end}
`,
    );
    return path;
  };
  const run = (end: string) => {
    const out = file();
    const r = spawnSync(process.execPath, ["--import", "tsx", script(end), out], { encoding: "utf8", timeout: 60_000 });
    return { lines: lines(readFileSync(out, "utf8")), signal: r.signal, status: r.status };
  };

  it.each([
    ["process.exit", "process.exit(0);"],
    ["the loop running out of work", ""],
    ["an uncaught exception", "setTimeout(() => { throw new Error('boom'); }, 10);"],
    ["a fatal line before a kill", "log.fatal('fatal'); process.kill(process.pid, 'SIGKILL');"],
  ])("every line is written on %s", (_, end) => {
    const r = run(end);
    expect(r.lines.length).toBe(end.includes("fatal") ? 4 : 3);
  });

  it("a kill outright loses the gathered lines (the documented trade-off)", () => {
    const r = run("process.kill(process.pid, 'SIGKILL');");
    expect(r.signal).toBe("SIGKILL");
    expect(r.lines).toEqual([]);
  });
});
