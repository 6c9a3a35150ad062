import { afterEach, describe, expect, it, vi } from "vitest";
import { SseWriter } from "../../http/sse-writer";
import type { SseStream } from "../../http/sse-response";

/** A stream that records what it is given. */
function recorder(): SseStream & { text: string } {
  const s = {
    text: "",
    write: async (t: string) => {
      s.text += t;
    },
    onAbort: () => {},
  };
  return s;
}

afterEach(() => vi.useRealTimers());

describe("SseWriter's keep-alive", () => {
  it("one shared timer for every open stream, none once all are closed", async () => {
    vi.useFakeTimers();
    const before = vi.getTimerCount();
    const streams = Array.from({ length: 100 }, recorder);
    const writers = streams.map((s) => new SseWriter(s));
    // Issue 47: thousands of idle followers cost one timer, not one each.
    expect(vi.getTimerCount() - before).toBe(1);
    await vi.advanceTimersByTimeAsync(15_000);
    for (const w of writers) await w.drain();
    for (const s of streams) expect(s.text).toBe(": keep-alive\n\n");

    writers[0]!.close();
    await vi.advanceTimersByTimeAsync(15_000);
    for (const w of writers) await w.drain();
    expect(streams[0]!.text).toBe(": keep-alive\n\n");
    expect(streams[1]!.text).toBe(": keep-alive\n\n: keep-alive\n\n");

    for (const w of writers) w.close();
    expect(vi.getTimerCount() - before).toBe(0);
  });
});
