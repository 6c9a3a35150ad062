import type { RunEventRow } from "../storage/runs";
import type { SseStream } from "./sse-response";

const HEARTBEAT_MS = 15_000;

/**
 * Every open writer, kept alive by one shared timer rather than one per stream: thousands of idle
 * followers cost one timer (issue 47), which runs only while some stream is open.
 */
const open = new Set<SseWriter>();
let heartbeat: NodeJS.Timeout | null = null;

function beat(): void {
  for (const w of open) w.comment("keep-alive");
}

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

  constructor(private readonly stream: SseStream) {
    open.add(this);
    if (!heartbeat) {
      heartbeat = setInterval(beat, HEARTBEAT_MS);
      heartbeat.unref();
    }
    stream.onAbort(() => this.close());
  }

  send(e: RunEventRow): void {
    // JSON.stringify escapes line breaks, so the data is always one `data:` line.
    this.enqueue(`event: ${e.event}\ndata: ${JSON.stringify(e.data ?? {})}\nid: ${e.seq}\n\n`);
  }

  /**
   * An event without an `id:` line: news that is not stored (an operator's presence), so it
   * moves no client's Last-Event-ID and a resume neither expects nor replays it.
   */
  sendEphemeral(event: string, data: unknown): void {
    this.enqueue(`event: ${event}\ndata: ${JSON.stringify(data ?? {})}\n\n`);
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
    open.delete(this);
    if (open.size === 0 && heartbeat) {
      clearInterval(heartbeat);
      heartbeat = null;
    }
  }
}
