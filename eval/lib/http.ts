import { createParser } from "eventsource-parser";

/** The eval's HTTP client: what any client of CONTRACT.md sees (JSON and SSE), nothing more. */

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface SseResult {
  status: number;
  events: SseEvent[];
  /** Set when the answer was not an event stream (an HTTP error). */
  json?: { error?: { code?: string; message?: string } } & Record<string, unknown>;
  ms: number;
}

export class Client {
  constructor(
    readonly base: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async json<T = Record<string, unknown>>(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { ...this.headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as T };
  }

  async sse(path: string, body: unknown): Promise<SseResult> {
    const t0 = performance.now();
    const res = await fetch(`${this.base}${path}`, {
      method: "POST",
      headers: { ...this.headers, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    if (!res.headers.get("content-type")?.includes("text/event-stream")) {
      const json = (await res.json().catch(() => ({}))) as SseResult["json"];
      return { status: res.status, events: [], ...(json ? { json } : {}), ms: performance.now() - t0 };
    }
    const events: SseEvent[] = [];
    const parser = createParser({
      onEvent(m) {
        let data: Record<string, unknown> = {};
        try {
          data = m.data ? (JSON.parse(m.data) as Record<string, unknown>) : {};
        } catch {
          /* keep {} */
        }
        events.push({ event: m.event ?? "message", data });
      },
    });
    const decoder = new TextDecoder();
    for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>)
      parser.feed(decoder.decode(piece, { stream: true }));
    return { status: res.status, events, ms: performance.now() - t0 };
  }
}

export const named = (r: SseResult, name: string) => r.events.filter((e) => e.event === name).map((e) => e.data);
export const first = (r: SseResult, name: string) => named(r, name)[0];
export const stageOf = (r: SseResult, id: string) =>
  named(r, "stage").find((s) => s.stageId === id) as
    { stageId: string; status: string; data: Record<string, unknown> } | undefined;
