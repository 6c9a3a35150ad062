import { liveEvents, type SseEvent } from "../utils/sse";

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
  const live = liveEvents(res);
  return {
    status: res.status,
    headers: res.headers,
    events: live.events,
    ended: live.ended,
    waitFor: (pred, timeoutMs = 30_000) =>
      live.until(() => (pred(live.events) ? true : undefined), timeoutMs, true).then(() => {}),
  };
}

export const tokens = (all: SseEvent[]) => all.filter((e) => e.event === "token").length;
