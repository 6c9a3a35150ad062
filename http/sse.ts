import type { Context } from "hono";
import { Run, type Outcome } from "../driver/run";
import type { RunEventRow } from "../storage/runs";
import type { Deps } from "./deps";
import { toAppError } from "./errors";
import { sseResponse, type SseStream } from "./sse-response";
import { beginRun } from "./turn-begin";

const HEARTBEAT_MS = 15_000;

/**
 * Writes run events in order without making the producer wait: a slow client delays
 * only its own socket. Each event is `event:`, one line of JSON in `data:`, and `id:`.
 * Events that arrive while a write is in flight leave together in the next one: a burst
 * of tokens costs one trip through the response stream, not one per token.
 */
export class SseWriter {
  private chain: Promise<void> = Promise.resolve();
  private pending = "";
  private scheduled = false;
  private closed = false;
  private heartbeat: NodeJS.Timeout;

  constructor(private readonly stream: SseStream) {
    this.heartbeat = setInterval(() => this.comment("keep-alive"), HEARTBEAT_MS);
    this.heartbeat.unref();
    stream.onAbort(() => this.close());
  }

  send(e: RunEventRow): void {
    // JSON.stringify escapes line breaks, so the data is always one `data:` line.
    this.enqueue(`event: ${e.event}\ndata: ${JSON.stringify(e.data ?? {})}\nid: ${e.seq}\n\n`);
  }

  comment(text: string): void {
    this.enqueue(`: ${text.replace(/[\r\n]+/g, " ")}\n\n`);
  }

  private enqueue(text: string): void {
    if (this.closed) return;
    this.pending += text;
    if (this.scheduled) return;
    this.scheduled = true;
    this.chain = this.chain
      .then(() => {
        this.scheduled = false;
        const out = this.pending;
        this.pending = "";
        return this.closed || !out ? undefined : this.stream.write(out).then(() => undefined);
      })
      .catch(() => this.close());
  }

  get isClosed() {
    return this.closed;
  }

  async drain(): Promise<void> {
    await this.chain;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
  }
}

export interface StreamRunOptions {
  conversationId: string;
  tenantId: string;
  kind: string;
  /** How run_started names the conversation (`conversationId`, or `threadId` for the clinic). */
  idField?: "conversationId" | "threadId";
  /** When true, `work` emits run_started itself (e.g. with an interactionId it has to find first). */
  deferStart?: boolean;
  debug?: boolean;
  work: (run: Run, writer: SseWriter) => Promise<void>;
  /** Called when `work` finishes without completing the run through the driver. */
  outcome?: Outcome;
  /** A run the route began itself (beginRun) because it had work to do between the claim and the stream. */
  begun?: Run;
}

/**
 * Runs one streamed turn: run_started … (error) … done, always ending with `done`. The run is
 * claimed before the stream opens (http/turn-begin.ts): a busy conversation or a reused
 * Idempotency-Key is a plain HTTP 409, a retried key replays its run; the stream's headers
 * carry X-Run-Id and X-Conversation-Id.
 */
export async function streamRun(c: Context, deps: Deps, o: StreamRunOptions): Promise<Response> {
  let run = o.begun;
  if (!run) {
    const begun = await beginRun(c, deps, { conversationId: o.conversationId, tenantId: o.tenantId, kind: o.kind, debug: o.debug });
    if (begun.replay) return begun.replay;
    run = begun.run;
  }
  return streamBegunRun(c, deps, run, o);
}

/** A route that began the run but then refused the request (before any stream): the run is discarded, the error goes out as JSON. */
export async function refuseBegunRun(run: Run, e: unknown): Promise<never> {
  await run.discard().catch((de) => console.error("could not discard a refused run", de));
  throw e;
}

function streamBegunRun(c: Context, deps: Deps, run: Run, o: StreamRunOptions): Response {
  const headers = { "x-run-id": run.id, "x-conversation-id": o.conversationId };
  return sseResponse(c, async (stream) => {
    const writer = new SseWriter(stream);
    run.attach((e) => writer.send(e));
    stream.onAbort(() => run.detach());
    try {
      if (!o.deferStart) run.emit("run_started", { runId: run.id, [o.idField ?? "conversationId"]: o.conversationId });
      await o.work(run, writer);
      if (!run.ended) await deps.db.sql.begin(async (tx) => run.complete(tx, [], o.outcome)).then((publish) => publish());
    } catch (e) {
      const gone = run.signal.aborted;
      const err = toAppError(e);
      if (err.code === "internal" && !gone) console.error(`run ${run.id} failed:`, e);
      await run
        .fail(gone ? "internal" : err.code, gone ? "Клиент отключился; ход не сохранён — отправьте сообщение ещё раз." : err.message)
        .catch((fe) => console.error("could not record run failure", fe));
    }
    await writer.drain();
    writer.close();
  }, headers);
}
