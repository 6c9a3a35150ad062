/**
 * The `data` of server-sent events, split out of a text stream fed in arbitrary pieces. Only
 * what a chat-completions stream needs: events' data (multi-line joined with LF); comments, ids,
 * event names and retry fields are ignored. Lines end in LF, CRLF or CR, as the spec allows.
 *
 * Inline rather than eventsource-parser because it runs once per model token on the relay path:
 * measured in bench/stream.ts, a general parser plus the SDK's decoder cost about twice the
 * rest of relaying a token. test/llm/sse-data.test.ts checks it against eventsource-parser.
 */
export class SseDataReader {
  private buf = "";
  private data: string | null = null;
  /** A CR ended the last piece: an LF starting the next one belongs to it. */
  private pendingCr = false;

  /**
   * `maxEventChars`: an unterminated line or an event's data longer than this throws
   * (EventTooLarge). Without it a peer that never ends a line grows the buffer without bound,
   * and every piece rescans it.
   */
  constructor(
    private readonly onData: (data: string) => void,
    private readonly maxEventChars = Infinity,
  ) {}

  push(text: string): void {
    let buf = this.buf + text;
    if (this.pendingCr && buf.charCodeAt(0) === 10) buf = buf.slice(1);
    this.pendingCr = false;
    let start = 0;
    // Positions of the next LF and CR, each searched again only once passed (no rescans).
    let lf = -2;
    let cr = -2;
    for (;;) {
      if (lf !== -1 && lf < start) lf = buf.indexOf("\n", start);
      if (cr !== -1 && cr < start) cr = buf.indexOf("\r", start);
      let end: number;
      let next: number;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        end = cr;
        if (cr + 1 === buf.length) {
          // Maybe the first half of a CRLF: the line ends here either way.
          this.pendingCr = true;
          next = cr + 1;
        } else next = buf.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf >= 0) {
        end = lf;
        next = lf + 1;
      } else break;
      this.line(buf.slice(start, end));
      start = next;
    }
    this.buf = start === 0 ? buf : buf.slice(start);
    if (this.buf.length > this.maxEventChars) throw new EventTooLarge(this.maxEventChars);
  }

  private line(line: string): void {
    if (line === "") {
      const d = this.data;
      this.data = null;
      if (d !== null) this.onData(d);
      return;
    }
    if (!line.startsWith("data")) return;
    let v: string;
    if (line.length === 4) v = "";
    else if (line.charCodeAt(4) !== 58)
      return; // a field named e.g. "dataset"
    else v = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    this.data = this.data === null ? v : `${this.data}\n${v}`;
    if (this.data.length > this.maxEventChars) throw new EventTooLarge(this.maxEventChars);
  }
}

export class EventTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`a server-sent event longer than ${limit} characters`);
  }
}
