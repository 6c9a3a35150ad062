import { trace, type Span, type Tracer, type TracerProvider } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { inSpan } from "../../driver/tracing";

/** driver/tracing.ts: no SDK, no span work; an SDK registered later gets real spans. */

function recordingProvider(log: { name: string; ended: boolean; error?: string }[]): TracerProvider {
  const tracer = {
    startSpan(name: string) {
      const rec: { name: string; ended: boolean; error?: string } = { name, ended: false };
      log.push(rec);
      const span = {
        setAttribute: () => span,
        setAttributes: () => span,
        recordException: (e: Error) => void (rec.error = e.message),
        setStatus: () => span,
        end: () => void (rec.ended = true),
        isRecording: () => true,
      };
      return span as unknown as Span;
    },
    startActiveSpan(name: string, ...args: unknown[]) {
      return (args.at(-1) as (s: Span) => unknown)(this.startSpan(name));
    },
  };
  return { getTracer: () => tracer as unknown as Tracer };
}

afterEach(() => trace.disable());

describe("inSpan", () => {
  it("without a registered SDK hands fn one shared non-recording span and returns its result", async () => {
    const seen: Span[] = [];
    const a = await inSpan("a", { x: 1 }, async (s) => (seen.push(s), 1));
    const b = await inSpan("b", {}, async (s) => (seen.push(s), 2));
    expect([a, b]).toEqual([1, 2]);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[0]!.isRecording()).toBe(false);
    await expect(inSpan("c", {}, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  });

  it("with an SDK registered after the module loaded records, ends and marks failed spans", async () => {
    const log: { name: string; ended: boolean; error?: string }[] = [];
    trace.setGlobalTracerProvider(recordingProvider(log));
    expect(await inSpan("ok", {}, async (s) => s.isRecording())).toBe(true);
    await expect(inSpan("bad", {}, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(log).toEqual([
      { name: "ok", ended: true },
      { name: "bad", ended: true, error: "boom" },
    ]);
  });
});
