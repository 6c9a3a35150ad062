// A validated answer stream: model text reaches the client only after it passed the system's
// checker, one sentence at a time. Why sentences: a claim (a party with an amount, a count, a
// "nothing is owed" conclusion, a cited document) lives inside one sentence, so checking each
// completed sentence before it is released means a client never displays a rejected claim, while
// the answer still streams. What only the whole text can show (a missing block, a claim split
// across sentences) is checked at the end; if that fails after sentences were released, the turn
// sends `answer_replaced` with the authoritative text and the client drops what it showed.
//
// Wire protocol (doc/streaming.md):
//   token {delta}                   validated text only, in order
//   answer_replaced {text, reason, issues}
//                                   discard every `token` of this run, show `text` instead
//   final {answer | …}              always carries the authoritative text

/** Checks answer text. Both return user-readable issue strings; none → the text passes. */
export interface AnswerChecker {
  /** One complete sentence (or line), in the order it was streamed. */
  sentence(text: string): string[];
  /** The whole answer once the model finished. */
  whole(text: string): string[];
  /**
   * What the user sees of a sentence that passed (closed-world answers write facts as slots the
   * engine renders, driver/closed-text.ts); absent: the sentence as written.
   */
  render?(sentence: string): string;
}

export interface GateResult {
  /** Everything the model produced. */
  text: string;
  /** What was released to the client as `token` deltas (a prefix of `text`, rendered when the checker renders). */
  released: string;
  ok: boolean;
  issues: string[];
}

// A sentence ends at . ! ? … (possibly followed by closing quotes/brackets) and whitespace, or at
// a newline. A dot inside a number ("1.5", "10.04.2026") is not followed by whitespace, so it
// does not end a sentence.
const BOUNDARY = /[.!?…]+["»”')\]]*(?=\s)\s*|\n+/g;

/**
 * Splits off complete sentences from `buffer`, looking for boundaries from `from` on (the caller
 * knows no boundary ends before it); returns them and the unfinished rest.
 */
export function splitSentences(buffer: string, from = 0): { complete: string[]; rest: string } {
  const complete: string[] = [];
  let start = 0;
  BOUNDARY.lastIndex = from;
  for (let m = BOUNDARY.exec(buffer); m; m = BOUNDARY.exec(buffer)) {
    const end = m.index + m[0].length;
    complete.push(buffer.slice(start, end));
    start = end;
  }
  return { complete, rest: buffer.slice(start) };
}

/**
 * Buffers deltas, releases each completed sentence that passes `checker.sentence`, and stops
 * releasing at the first rejected one (nothing after a rejected sentence is shown: the turn
 * will replace the answer). Linear in the text: each character is scanned a bounded number
 * of times.
 */
export class ValidatedStream {
  private pendingParts: string[] = [];
  private lastChars = "";
  private all: string[] = [];
  private releasedParts: string[] = [];
  private rejected = false;
  private issues: string[] = [];

  constructor(
    private readonly checker: AnswerChecker,
    private readonly release: (delta: string) => void,
  ) {}

  push(delta: string): void {
    if (!delta) return;
    this.all.push(delta);
    if (this.rejected) return;
    // Look for a boundary only in the new text plus a few characters before it (a boundary split
    // over two deltas: "…»" then " "); join the buffered parts only when one is there. A reply
    // without boundaries thus stays linear (a regex over a growing string would flatten it on
    // every delta: quadratic).
    const window = this.lastChars + delta;
    BOUNDARY.lastIndex = 0;
    if (!BOUNDARY.test(window)) {
      this.pendingParts.push(delta);
      this.lastChars = window.slice(-8);
      return;
    }
    this.pendingParts.push(delta);
    const { complete, rest } = splitSentences(this.pendingParts.join(""));
    this.pendingParts = rest ? [rest] : [];
    this.lastChars = rest.slice(-8);
    for (const s of complete) if (!this.offer(s)) break;
  }

  /** The model finished: check the unfinished tail and the whole text. */
  end(): GateResult {
    const text = this.all.join("");
    const tail = this.pendingParts.join("");
    if (!this.rejected && tail) this.offer(tail);
    this.pendingParts = [];
    if (!this.rejected) {
      const whole = this.checker.whole(text);
      if (whole.length) {
        this.rejected = true;
        this.issues.push(...whole);
      }
    }
    return { text, released: this.releasedParts.join(""), ok: !this.rejected, issues: [...new Set(this.issues)] };
  }

  /** True while nothing has been rejected. */
  get passing(): boolean {
    return !this.rejected;
  }

  private offer(sentence: string): boolean {
    if (this.rejected) return false;
    const issues = sentence.trim() ? this.checker.sentence(sentence) : [];
    if (issues.length) {
      this.rejected = true;
      this.pendingParts = [];
      this.issues.push(...issues);
      return false;
    }
    const shown = this.checker.render ? this.checker.render(sentence) : sentence;
    this.releasedParts.push(shown);
    this.release(shown);
    return true;
  }
}
