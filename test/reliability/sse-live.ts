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
  /** A refusal before any stream (status not 2xx): the error body's `error.code` (CONTRACT section 6). */
  errorCode?: string;
}

export async function openSse(url: string, body: unknown, headers: Record<string, string> = {}): Promise<LiveSse> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
  if (!res.ok) {
    const text = await res.text();
    let errorCode: string | undefined;
    try {
      errorCode = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
    } catch {
      errorCode = undefined;
    }
    const none = async () => {
      throw new Error(`no stream: HTTP ${res.status} ${text.slice(0, 200)}`);
    };
    return {
      status: res.status,
      headers: res.headers,
      events: [],
      ended: Promise.resolve("end"),
      waitFor: none,
      errorCode,
    };
  }
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
