import { apiError, ConnectionError, NotFoundError, RunFailedError, StreamInterruptedError } from "./errors";
import type { AnyRunEvent, DataOf, UntypedEvent } from "./events";
import { readEvents } from "./sse";

export interface Transport {
  baseUrl: string;
  fetch: typeof fetch;
  /** The token's header, and with `conversationId` that conversation's credential when the client holds one. */
  headers(extra?: Record<string, string>, conversationId?: string | null): Record<string, string>;
  /** Attempts without progress before a turn gives up (each waits a little longer). */
  maxRetries: number;
  retryDelayMs: number;
}

export interface SendOptions {
  /** Sent as Idempotency-Key; default a new random key per send (the retries of one send share it). */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /**
   * The conversation the turn (or the followed run) belongs to: its credential is sent with every
   * request of the turn, the resumes too (a `chat` token reaches a conversation only with it).
   */
  conversationId?: string;
}

/**
 * One sent message: an async iterator of the run's events, each exactly once and in order,
 * however often the connection drops. Before the run id is known (no headers yet) a drop
 * re-sends the POST with the same Idempotency-Key, which replays the run the server already
 * started; after it, the client resumes at GET /v1/runs/{runId}/events with Last-Event-ID (and
 * X-Conversation-Id, the balancer's affinity key).
 */
export class Turn<E extends UntypedEvent = AnyRunEvent> implements AsyncIterable<E> {
  readonly idempotencyKey: string;
  /** From the X-Run-Id header: known once the server has answered. */
  runId: string | null = null;
  conversationId: string | null = null;
  /** The SSE id of the last event delivered. */
  lastEventId = 0;
  /** Connections opened for this turn (1 when nothing dropped). */
  connections = 0;
  private started = false;

  constructor(
    private readonly t: Transport,
    private readonly path: string,
    private readonly body: unknown,
    private readonly o: SendOptions = {},
  ) {
    this.idempotencyKey = o.idempotencyKey ?? crypto.randomUUID();
    this.conversationId = o.conversationId ?? null;
  }

  [Symbol.asyncIterator](): AsyncIterator<E> {
    if (this.started) throw new Error("a Turn can be iterated once");
    this.started = true;
    return this.events();
  }

  /** Reads the whole turn; resolves with `final` (or `clarification_required`), throws RunFailedError on the server's `error`. */
  async result(): Promise<{
    final?: DataOf<E, "final">;
    clarification?: DataOf<E, "clarification_required">;
    events: E[];
  }> {
    const events: E[] = [];
    for await (const e of this) events.push(e);
    const error = events.find((e) => e.event === "error");
    if (error) {
      const data = error.data as DataOf<AnyRunEvent, "error">;
      throw new RunFailedError(this.runId, data.code, data.message);
    }
    const data = <N extends string>(name: N) => events.find((e) => e.event === name)?.data as DataOf<E, N> | undefined;
    return { final: data("final"), clarification: data("clarification_required"), events };
  }

  private async *events(): AsyncGenerator<E> {
    let failures = 0;
    let lastError: unknown = null;
    for (;;) {
      if (failures > this.t.maxRetries) throw new StreamInterruptedError(this.runId, this.lastEventId, lastError);
      if (failures > 0) await sleep(this.t.retryDelayMs * 2 ** (failures - 1), this.o.signal);
      let res: Response;
      const resume: Record<string, string> = this.lastEventId > 0 ? { "last-event-id": String(this.lastEventId) } : {};
      // A balancer that keeps a conversation on one process routes the run's follower by it (deploy/haproxy.cfg).
      const affinity: Record<string, string> = this.conversationId ? { "x-conversation-id": this.conversationId } : {};
      const url = this.runId
        ? `${this.t.baseUrl}/v1/runs/${encodeURIComponent(this.runId)}/events`
        : `${this.t.baseUrl}${this.path}`;
      try {
        this.connections++;
        res = this.runId
          ? await this.t.fetch(url, {
              headers: this.t.headers({ accept: "text/event-stream", ...resume, ...affinity }, this.conversationId),
              signal: this.o.signal,
            })
          : await this.t.fetch(url, {
              method: "POST",
              headers: this.t.headers(
                {
                  "content-type": "application/json",
                  accept: "text/event-stream",
                  "idempotency-key": this.idempotencyKey,
                  ...resume,
                },
                this.conversationId,
              ),
              body: JSON.stringify(this.body),
              signal: this.o.signal,
            });
      } catch (e) {
        if (this.o.signal?.aborted) throw e;
        failures++;
        lastError = new ConnectionError(this.t.baseUrl, e);
        if (failures > this.t.maxRetries) throw lastError;
        continue;
      }
      // 204: the run is over and nothing is after Last-Event-ID (we had it all).
      if (res.status === 204) return;
      if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
        const body = await res.json().catch(() => null);
        const err = apiError(res.status, body);
        // A 5xx or 503 before the stream is worth another try; a 4xx is an answer.
        if (res.status >= 500 && !(err instanceof NotFoundError)) {
          failures++;
          lastError = err;
          if (failures > this.t.maxRetries) throw err;
          continue;
        }
        throw err;
      }
      this.runId ??= res.headers.get("x-run-id");
      this.conversationId ??= res.headers.get("x-conversation-id");
      let progressed = false;
      try {
        for await (const raw of readEvents(res.body!)) {
          // A replay starts after Last-Event-ID; anything at or before it was delivered already.
          if (raw.id !== null && raw.id <= this.lastEventId) continue;
          if (raw.id !== null) this.lastEventId = raw.id;
          progressed = true;
          // The server's stream is typed by the same contract: the events are taken as it declares them.
          const e = { event: raw.event, id: raw.id ?? this.lastEventId, data: raw.data } as E;
          if (e.event === "run_started") this.runId ??= (e.data as DataOf<AnyRunEvent, "run_started">).runId ?? null;
          yield e;
          if (e.event === "done") return;
        }
        lastError = new Error("the stream ended before `done`");
      } catch (e) {
        if (this.o.signal?.aborted) throw e;
        lastError = e;
      }
      failures = progressed ? 1 : failures + 1;
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}
