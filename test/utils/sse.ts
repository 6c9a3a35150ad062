import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface SseEvent {
  event: string;
  id?: string;
  data: unknown;
}

export interface SseResponse {
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** Set when the answer was not an event stream (an HTTP error). */
  json?: unknown;
}

/**
 * Reads a whole SSE response; `stopAfter` lets a test drop the connection mid-run, `forMs` after
 * that long (an endless stream: what came by then).
 */
export async function readSse(
  res: Response,
  opts: { stopAfter?: (e: SseEvent, all: SseEvent[]) => boolean; forMs?: number } = {},
): Promise<SseResponse> {
  const events: SseEvent[] = [];
  if (!res.headers.get("content-type")?.includes("text/event-stream")) {
    return { status: res.status, headers: res.headers, events, json: await res.json().catch(() => null) };
  }
  let stop = false;
  const parser = createParser({
    onEvent(m: EventSourceMessage) {
      if (stop) return;
      const e: SseEvent = { event: m.event ?? "message", id: m.id, data: m.data ? JSON.parse(m.data) : null };
      events.push(e);
      if (opts.stopAfter?.(e, events)) stop = true;
    },
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const enough =
    opts.forMs === undefined
      ? null
      : setTimeout(() => {
          stop = true;
          void reader.cancel().catch(() => {});
        }, opts.forMs);
  try {
    while (!stop) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
    if (enough) clearTimeout(enough);
    if (stop) await reader.cancel().catch(() => {});
  }
  return { status: res.status, headers: res.headers, events };
}

export async function postSse(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  opts: Parameters<typeof readSse>[1] = {},
): Promise<SseResponse> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
  return readSse(res, opts);
}

export const eventsNamed = (r: SseResponse, name: string) =>
  r.events.filter((e) => e.event === name).map((e) => e.data as Record<string, unknown>);

/** A response's events, read in the background as they come (the connection stays open until it ends or is aborted). */
export interface LiveEvents {
  events: SseEvent[];
  /** Settles when the stream ends or breaks (an abort is a break). */
  ended: Promise<"end" | "broken">;
  /**
   * Resolves with what `found` returns once it returns something (checked now and at each event);
   * rejects after `ms`, or, with `failAtEnd`, when the stream ends first.
   */
  until<T>(found: () => T | undefined, ms: number, failAtEnd?: boolean): Promise<T>;
}

export function liveEvents(res: Response): LiveEvents {
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  let finished = false;
  const parser = createParser({
    onEvent(m: EventSourceMessage) {
      events.push({ event: m.event ?? "message", id: m.id, data: m.data ? JSON.parse(m.data) : null });
      wake();
    },
  });
  const ended = (async (): Promise<"end" | "broken"> => {
    const decoder = new TextDecoder();
    try {
      const reader = res.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return "end";
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      return "broken";
    } finally {
      finished = true;
      wake();
    }
  })();
  const got = () => events.map((e) => e.event).join(", ");
  return {
    events,
    ended,
    until: (found, ms, failAtEnd = false) =>
      new Promise((resolve, reject) => {
        const stop = () => (waiters.delete(check), clearTimeout(timer));
        const check = () => {
          const v = found();
          if (v !== undefined) (stop(), resolve(v));
          else if (failAtEnd && finished)
            (stop(), reject(new Error(`stream ended before the awaited event; got ${got()}`)));
        };
        const timer = setTimeout(
          () => (waiters.delete(check), reject(new Error(`nothing awaited within ${ms} ms; got ${got()}`))),
          ms,
        );
        waiters.add(check);
        check();
      }),
  };
}

/** A live SSE connection that keeps reading in the background (a thread's event stream, say). */
export interface Following {
  events: SseEvent[];
  /** Resolves with the first event (from now or already received) that `pred` accepts. */
  next(pred: (e: SseEvent) => boolean, ms?: number): Promise<SseEvent>;
  close(): void;
}

export async function followSse(url: string, headers: Record<string, string> = {}): Promise<Following> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: ac.signal });
  if (!res.ok) throw new Error(`follow ${url}: HTTP ${res.status} ${await res.text()}`);
  const live = liveEvents(res);
  return {
    events: live.events,
    next: (pred, ms = 5_000) => live.until(() => live.events.find(pred), ms),
    close: () => ac.abort(),
  };
}
