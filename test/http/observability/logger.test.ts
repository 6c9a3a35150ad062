import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, redactLine } from "../../../http/observability/logger";

/** The log's second line of defence: secret fields censored without pino's per-line deep copy. */

function linesOf(log: (l: ReturnType<typeof createLogger>) => void): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split("\n").filter(Boolean)) out.push(JSON.parse(l));
      cb();
    },
  });
  const logger = createLogger(sink as never, "info");
  log(logger);
  logger.flush?.();
  return out;
}

describe("redactLine", () => {
  it("censors secret fields at the top and one level down, and headers whole", () => {
    const [line] = linesOf((l) =>
      l.info(
        {
          token: "t-1",
          apiKey: "k-1",
          headers: { authorization: "Bearer x", accept: "*/*" },
          request: { authorization: "Bearer y", path: "/v1" },
          err: { message: "boom", password: "p-1" },
          keep: "visible",
        },
        "line",
      ),
    );
    expect(line).toMatchObject({
      token: "[redacted]",
      apiKey: "[redacted]",
      headers: "[redacted]",
      request: { authorization: "[redacted]", path: "/v1" },
      err: { message: "boom", password: "[redacted]" },
      keep: "visible",
      msg: "line",
    });
    expect(JSON.stringify(line)).not.toMatch(/Bearer|t-1|k-1|p-1/);
  });

  it("returns the line itself when nothing is secret, and never changes the caller's object", () => {
    const clean = { event: "turn", nested: { status: "ok" }, list: [{ token: "in a list stays" }] };
    expect(redactLine(clean)).toBe(clean);
    const secret = { nested: { token: "s" } };
    const out = redactLine(secret);
    expect(out).not.toBe(secret);
    expect(secret.nested.token).toBe("s");
    expect(out).toEqual({ nested: { token: "[redacted]" } });
  });
});
