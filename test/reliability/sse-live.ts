import { createParser } from "eventsource-parser";
import type { SseEvent } from "../utils/sse";

/**
 * An SSE response read in the background, connection kept open: a test can wait for some
 * events and then kill the server under a client that is still listening (closing the
 * connection first would end the run through the client-disconnect path instead).
 */
export interface LiveSse {
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** Resolves when `pred` holds for the events so far (rejects after `timeoutMs`). */
  waitFor(pred: (all: SseEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Settles when the stream ends or breaks. */
  ended: Promise<"end" | "broken">;
}

export async function openSse(url: string, body: unknown, headers: Record<string, string> = {}): Promise<LiveSse> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  const parser = createParser({
    onEvent(m) {
      events.push({ event: m.event ?? "message", id: m.id, data: m.data ? JSON.parse(m.data) : null });
      for (const w of waiters) w();
    },
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let finished = false;
  const ended = (async (): Promise<"end" | "broken"> => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return "end";
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      return "broken";
    } finally {
      finished = true;
      for (const w of waiters) w();
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    events,
    ended,
    waitFor(pred, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pred(events)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          } else if (finished) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`stream ended before the awaited event; got ${events.map((e) => e.event).join(",")}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting; got ${events.map((e) => e.event).join(",")}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

export const tokens = (all: SseEvent[]) => all.filter((e) => e.event === "token").length;
