import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface RawEvent {
  event: string;
  id: number | null;
  data: unknown;
}

/**
 * The events of one SSE response body, as they arrive. Ends when the body ends; throws when
 * the connection breaks (the caller resumes from the last id it got).
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<RawEvent> {
  const queue: RawEvent[] = [];
  const parser = createParser({
    onEvent(m: EventSourceMessage) {
      let data: unknown = m.data;
      try {
        data = m.data ? JSON.parse(m.data) : {};
      } catch {
        /* not JSON: keep the text */
      }
      const id = m.id !== undefined && /^\d+$/.test(m.id) ? Number(m.id) : null;
      queue.push({ event: m.event ?? "message", id, data });
    },
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length) yield queue.shift()!;
    }
  } finally {
    // Stopping early (a `return` from the consumer) closes the connection.
    await reader.cancel().catch(() => {});
  }
}
