import type { z } from "zod";
import type { threadEvents } from "../contract/inbox";
import type { OperatorTyping } from "../contract/inbox-tools";
import { apiError, ConnectionError } from "./errors";
import { readEvents } from "./sse";
import type { Transport } from "./turn";

/** A clinic thread's live events (issue 32): taken, an operator's message, released, closed, a patient's message while held. */
export type ThreadEvents = { [K in keyof typeof threadEvents]: z.output<(typeof threadEvents)[K]> };
export type ThreadEvent =
  | {
      [K in keyof ThreadEvents & string]: { event: K; id: number; data: ThreadEvents[K] };
    }[keyof ThreadEvents & string]
  /** Ephemeral (issue 43): an operator started or stopped typing; no id, never replayed. */
  | { event: "operator.typing"; id: null; data: z.output<typeof OperatorTyping> };

/**
 * Follows GET /v1/clinic/threads/{id}/events from `after` (0: the whole log; a thread's GET gives
 * `lastEventSeq`): yields every event once, in order, and reconnects with Last-Event-ID when the
 * connection drops — forever, until the caller stops iterating or `signal` aborts.
 */
export async function* followThread(
  t: Transport,
  threadId: string,
  o: { after?: number; signal?: AbortSignal } = {},
): AsyncGenerator<ThreadEvent> {
  let last = o.after ?? 0;
  for (let failures = 0; !o.signal?.aborted;) {
    let res: Response;
    try {
      res = await t.fetch(`${t.baseUrl}/v1/clinic/threads/${encodeURIComponent(threadId)}/events`, {
        headers: t.headers({ accept: "text/event-stream", "last-event-id": String(last) }, threadId),
        signal: o.signal,
      });
    } catch (e) {
      if (o.signal?.aborted) return;
      if (++failures > t.maxRetries) throw new ConnectionError(t.baseUrl, e);
      await new Promise((r) => setTimeout(r, t.retryDelayMs * 2 ** failures));
      continue;
    }
    if (!res.ok) throw apiError(res.status, await res.json().catch(() => null));
    try {
      for await (const e of readEvents(res.body!)) {
        if (e.id === null) {
          if (e.event === "operator.typing") yield e as ThreadEvent;
          continue;
        }
        if (e.id <= last) continue;
        last = e.id;
        failures = 0;
        yield e as ThreadEvent;
      }
    } catch {
      if (o.signal?.aborted) return;
    }
    if (++failures > t.maxRetries)
      throw new ConnectionError(t.baseUrl, new Error("the thread's stream keeps dropping"));
    await new Promise((r) => setTimeout(r, t.retryDelayMs * 2 ** failures));
  }
}
