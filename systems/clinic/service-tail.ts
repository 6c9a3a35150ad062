import { CUT_SIGNAL, CUT_STATE, createVisible } from "./tail-visible";
import {
  RAW_CAP,
  signalFromBody,
  signalFromJson,
  stateFromJson,
  type IntentSignal,
  type ParsedBranchOutput,
  type TailState,
} from "./tail-read";

/**
 * The branch's service tail (seed 003, CONTRACT §5.2): `STATE_JSON: {...}` and an intent-change
 * signal. Both are cut out of the text before the patient sees it.
 *
 * Signals are accepted in the forms models really produce:
 *   `[INTENT_CHANGE: code|reason]`, `[INTENT_CHANGE: code:reason]`, `[INTENT_CHANGE: CODE]`,
 *   a bare line `INTENT_CHANGE: code` (no brackets), and a JSON object
 *   `{"intent_change": "code", "reason": "…"}` / `{"intent_change": {"intent": "code", "reason": "…"}}`.
 * Codes and reasons are case-insensitive. Anything that opens like a signal is service text, even
 * when its code is unknown (then it is a malformed signal, still hidden).
 *
 * One incremental scanner serves both the token stream and the whole reply (`parseBranchOutput`
 * feeds the whole text in one piece), so the stream always equals the final reply. The scanner
 * looks at every character a bounded number of times: plain text is passed on as soon as it cannot
 * begin a marker (at most a short suffix is held), and a tail's body is scanned once as it arrives.
 */

/** Whitespace allowed inside a marker's opening ("[  INTENT_CHANGE", "{ \"intent_change\""); bounded so the held suffix is. */
const WS = 16;
/** A tail's JSON object longer than this is not parsed (it is malformed) but still scanned to its end. */
const OBJECT_CAP = 64 * 1024;

/** The beginning of any service construct, leftmost first. Group 1: bracket, 2: JSON signal, 3: bare signal, 4: STATE_JSON. */
const START = new RegExp(
  `(\\[[ \\t]{0,${WS}}INTENT_CHANGE)|(\\{\\s{0,${WS}}"intent_change")|((?<![A-Za-z0-9_])INTENT_CHANGE[ \\t]{0,${WS}}:)|(STATE_JSON)`,
  "gi",
);

/** `w` as nested optional groups: matches every prefix of `w` (including the empty one) then `rest` after the full word. */
const prefixOf = (w: string, rest = ""): string =>
  w.split("").reduceRight((acc, ch) => `${ch.replace(/[[\]{}"]/g, "\\$&")}(?:${acc})?`, rest);
/** A suffix of the text that could still grow into a START match. */
const PARTIALS = [
  new RegExp(`\\[[ \\t]{0,${WS}}(?:${prefixOf("INTENT_CHANGE")})?$`, "gi"),
  new RegExp(`\\{\\s{0,${WS}}(?:${prefixOf('"intent_change')})?$`, "gi"),
  new RegExp(`(?<![A-Za-z0-9_])${prefixOf("INTENT_CHANGE", `[ \\t]{0,${WS}}`)}$`, "gi"),
  new RegExp(`${prefixOf("STATE_JSON")}$`, "gi"),
];
/** Longest possible partial match: "{" + WS + '"intent_change' with room to spare. */
const PARTIAL_WINDOW = 2 + WS + 16;

type Mode = "text" | "bracket" | "bare" | "json_signal" | "state_pre" | "state_obj" | "rest";

/**
 * The incremental cutter. `push` returns the patient-visible text that became certain; `end`
 * returns the rest and `result()` the parsed tail and signal.
 */
export function createTailFilter() {
  let pending = "";
  let prev = "";
  let mode: Mode = "text";
  let body = "";
  // Balanced-object scan state (json_signal, state_obj).
  let depth = 0;
  let inString = false;
  let escaped = false;
  let state: TailState = { kind: "none" };
  let signal: IntentSignal = { kind: "none" };
  let emitted = "";
  let delta: string[] = [];
  const visible = createVisible((s) => delta.push(s));

  const keep = (s: string) => {
    if (body.length < OBJECT_CAP) body += s.slice(0, OBJECT_CAP - body.length + 1);
  };
  const setSignal = (s: IntentSignal) => {
    // The first well-formed signal decides; a malformed one is remembered only if nothing better comes.
    if (signal.kind !== "ok" && (s.kind === "ok" || signal.kind === "none")) signal = s;
  };
  const setState = (s: TailState) => {
    // The last well-formed tail wins; a malformed one only when no good one was seen.
    if (s.kind === "ok" || state.kind !== "ok") state = s;
  };
  const enter = (m: Mode, start = "") => {
    mode = m;
    body = start;
    depth = 0;
    inString = false;
    escaped = false;
  };
  /** Scans `s` as part of a JSON object; returns the index just past its closing brace, or -1. */
  const scanObject = (s: string): number => {
    for (let i = 0; i < s.length; i++) {
      const ch = s[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === "\\") escaped = true;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) return i + 1;
    }
    return -1;
  };

  /**
   * A bracket or bare signal's body runs up to `end`: until it arrives the body is kept; then the
   * signal is read, and the text resumes after `consumed` (the part of `end` that belongs to it).
   */
  const signalUntil = (end: string, consumed: "]" | ""): boolean => {
    const at = pending.indexOf(end);
    if (at < 0) {
      keep(pending);
      pending = "";
      return false;
    }
    keep(pending.slice(0, at));
    setSignal(signalFromBody(body));
    visible.cut("signal");
    pending = pending.slice(at + consumed.length);
    prev = consumed;
    enter("text");
    return true;
  };

  const step = (): boolean => {
    if (!pending) return false;
    switch (mode) {
      case "text": {
        // One character of context for the bare marker's word boundary.
        const hay = prev + pending;
        START.lastIndex = prev.length;
        const m = START.exec(hay);
        if (m) {
          const at = m.index - prev.length;
          if (at > 0) visible.text(pending.slice(0, at));
          const after = pending.slice(at + m[0].length);
          if (m[1]) enter("bracket");
          else if (m[3]) enter("bare");
          else if (m[4]) enter("state_pre");
          if (m[2]) {
            enter("json_signal");
            pending = pending.slice(at);
          } else pending = after;
          prev = "";
          return true;
        }
        const from = Math.max(0, pending.length - PARTIAL_WINDOW);
        const tailHay = (from === 0 ? prev || " " : pending[from - 1]) + pending.slice(from);
        let hold = pending.length;
        for (const p of PARTIALS) {
          // Index 0 is the context character, already passed on: the search starts after it.
          p.lastIndex = 1;
          const pm = p.exec(tailHay);
          if (pm) hold = Math.min(hold, from + pm.index - 1);
        }
        if (hold > 0) {
          visible.text(pending.slice(0, hold));
          prev = pending[hold - 1]!;
          pending = pending.slice(hold);
        }
        return false;
      }
      case "bracket":
        // The closing bracket is the signal's; it is the context character of the text after it.
        return signalUntil("]", "]");
      case "bare":
        // The line break is not the signal's: it stays in the text.
        return signalUntil("\n", "");
      case "state_pre": {
        let i = 0;
        while (i < pending.length && /[\s:`json]/i.test(pending[i]!)) i++;
        if (i === pending.length) {
          pending = "";
          return false;
        }
        if (pending[i] === "{") {
          enter("state_obj");
          pending = pending.slice(i);
          return true;
        }
        // Not a JSON object: everything from here on is service text (reported at the end).
        enter("rest");
        keep(pending.slice(i));
        pending = "";
        return false;
      }
      case "json_signal":
      case "state_obj": {
        const end = scanObject(pending);
        if (end < 0) {
          keep(pending);
          pending = "";
          return false;
        }
        keep(pending.slice(0, end));
        const tooLong = body.length > OBJECT_CAP;
        if (mode === "json_signal") {
          setSignal(tooLong ? { kind: "malformed", raw: body.slice(0, RAW_CAP) } : signalFromJson(body));
          visible.cut("signal");
        } else {
          setState(
            tooLong
              ? { kind: "malformed", raw: body.slice(0, RAW_CAP), error: "STATE_JSON too long" }
              : stateFromJson(body),
          );
          visible.cut("state");
        }
        pending = pending.slice(end);
        prev = "}";
        enter("text");
        return true;
      }
      case "rest":
        if (body.length < RAW_CAP) keep(pending);
        pending = "";
        return false;
    }
  };

  const drain = (): string => {
    const out = delta.join("");
    delta = [];
    emitted += out;
    return out;
  };

  let ended = false;
  // Every delta pushed, so `readingOf` can tell whether the filter read exactly a given text.
  let read = "";
  return {
    push(d: string): string {
      if (ended || !d) return "";
      read += d;
      pending += d;
      while (step());
      return drain();
    },
    end(): string {
      if (ended) return "";
      ended = true;
      switch (mode) {
        case "text":
          if (pending) visible.text(pending);
          break;
        case "bracket":
          keep(pending);
          setSignal({ kind: "malformed", raw: `[INTENT_CHANGE${body}`.slice(0, RAW_CAP) });
          break;
        case "bare":
          keep(pending);
          setSignal(signalFromBody(body));
          break;
        case "json_signal":
          keep(pending);
          setSignal({ kind: "malformed", raw: body.slice(0, RAW_CAP) });
          break;
        case "state_pre":
        case "state_obj":
          keep(pending);
          setState({
            kind: "malformed",
            raw: body.slice(0, RAW_CAP),
            error: "no complete JSON object after STATE_JSON",
          });
          break;
        case "rest":
          setState({ kind: "malformed", raw: body.slice(0, RAW_CAP), error: "no JSON object after STATE_JSON" });
          break;
      }
      pending = "";
      visible.end();
      return drain();
    },
    result(): ParsedBranchOutput {
      return { visible: emitted, state, intentChange: signal };
    },
    /**
     * The reading of `text` when the filter read exactly it (null after a retry's leftovers or a
     * relabelled reply): what the guards would get by parsing it again (parseBranchOutput).
     */
    readingOf(text: string): ParsedBranchOutput | null {
      return read === text ? this.result() : null;
    },
    get emitted() {
      return emitted;
    },
  };
}

export function parseBranchOutput(text: string): ParsedBranchOutput {
  const f = createTailFilter();
  f.push(text);
  f.end();
  return f.result();
}
