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

/** Reads a whole SSE response; `stopAfter` lets a test drop the connection mid-run. */
export async function readSse(
  res: Response,
  opts: { stopAfter?: (e: SseEvent, all: SseEvent[]) => boolean } = {},
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
  try {
    while (!stop) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
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
