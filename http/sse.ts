import type { Context } from "hono";
import { Run, type Outcome } from "../driver/run";
import type { EventsOf, runEvents } from "./contract";
import type { RunEventRow } from "../storage/runs";
import type { Deps } from "./deps";
import { toAppError } from "./errors";
import { sseResponse, type SseStream } from "./sse-response";

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

/** The events every streamed run carries; a system's map (its contract) extends them. */
type RunEvents = EventsOf<typeof runEvents>;

export interface StreamRunOptions<E extends RunEvents = RunEvents> {
  conversationId: string;
  tenantId: string;
  kind: string;
  /** How run_started names the conversation (`conversationId`, or `threadId` for the clinic). */
  idField?: "conversationId" | "threadId";
  /** When true, `work` emits run_started itself (e.g. with an interactionId it has to find first). */
  deferStart?: boolean;
  debug?: boolean;
  work: (run: Run<E>, writer: SseWriter) => Promise<void>;
  /** Called when `work` finishes without completing the run through the driver. */
  outcome?: Outcome;
}

/** Runs one streamed turn: run_started … (error) … done, always ending with `done`. */
export function streamRun<E extends RunEvents = RunEvents>(c: Context, deps: Deps, o: StreamRunOptions<E>): Response {
  return sseResponse(c, async (stream) => {
    const writer = new SseWriter(stream);
    let run: Run<E>;
    try {
      run = await Run.start<E>({
        sql: deps.db.sql,
        hub: deps.hub,
        conversationId: o.conversationId,
        tenantId: o.tenantId,
        kind: o.kind,
        owner: deps.instanceId,
        debug: o.debug ?? deps.config.aiDebug,
        detachGraceMs: deps.config.detachGraceMs,
        sink: (e) => writer.send(e),
        asyncCommits: deps.db.backend === "postgres",
        notifyFollowers: deps.db.backend === "postgres",
      });
    } catch (e) {
      const err = toAppError(e);
      writer.send({ seq: 1, event: "error", data: { code: err.code, message: err.message } });
      writer.send({ seq: 2, event: "done", data: {} });
      await writer.drain();
      return;
    }
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
  });
}
