import { describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { createLogger, logFormat } from "../../../http/observability/logger";
import { createProgress } from "../../../http/observability/progress";

const sink = (isTTY: boolean) => {
  const out = { text: "", isTTY, write: (s: string) => ((out.text += s), true) };
  return out;
};

describe("start-up progress line", () => {
  it("on a terminal rewrites one live line and clears it when done", () => {
    const out = sink(true);
    const p = createProgress(out);
    p.step("applying migration 1/2: a.sql");
    p.step("applying migration 2/2: b.sql");
    p.done();
    expect(out.text).not.toContain("\n");
    expect(out.text).toContain("\r\x1b[2K… applying migration 2/2: b.sql");
    expect(out.text.endsWith("\r\x1b[2K")).toBe(true);
  });

  it("anywhere else writes one plain line per step, no control characters", () => {
    const out = sink(false);
    const p = createProgress(out);
    p.step("opening the embedded database in ./.data");
    p.step("applying migration 1/1: a.sql");
    p.done();
    expect(out.text).toBe("… opening the embedded database in ./.data\n… applying migration 1/1: a.sql\n");
  });
});

describe("log format", () => {
  it("is pretty on a terminal and JSON otherwise, unless LOG_FORMAT says", () => {
    expect(logFormat({}, true)).toBe("pretty");
    expect(logFormat({}, false)).toBe("json");
    expect(logFormat({ LOG_FORMAT: "json" }, true)).toBe("json");
    expect(logFormat({ LOG_FORMAT: "pretty" }, false)).toBe("pretty");
  });

  it("keeps one JSON object per line for a destination that is not a terminal", () => {
    let text = "";
    const dest = new Writable({
      write(chunk, _e, cb) {
        text += String(chunk);
        cb();
      },
    });
    const log = createLogger(dest as never, "info");
    log.info({ event: "request", status: 200 }, "request");
    const line = JSON.parse(text.trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: "info", event: "request", status: 200, msg: "request" });
  });
});
