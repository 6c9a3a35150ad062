import { z } from "zod";
import { BranchCode, EscalationReason } from "./types";

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

export const StateJson = z.object({
  state_after: z.string().min(1).optional(),
  slots_updated: z.record(z.string(), z.unknown()).default({}),
  soft_insertion: z.boolean().optional(),
  /** Read only from escalate_human: the reason when the router (not a signal) sent the patient there. */
  escalation_reason: EscalationReason.optional(),
});
export type StateJson = z.infer<typeof StateJson>;

export type TailState =
  { kind: "none" } | { kind: "ok"; value: StateJson } | { kind: "malformed"; raw: string; error: string };

export type IntentSignal =
  | { kind: "none" }
  | { kind: "ok"; intent: BranchCode; reason: EscalationReason | null; rawReason: string | null }
  | { kind: "malformed"; raw: string };

export interface ParsedBranchOutput {
  /** What the patient may see. */
  visible: string;
  state: TailState;
  intentChange: IntentSignal;
}

/** Whitespace allowed inside a marker's opening ("[  INTENT_CHANGE", "{ \"intent_change\""); bounded so the held suffix is. */
const WS = 16;
/** Service text kept for the debug output is cut to this length (a runaway tail must not grow memory). */
const RAW_CAP = 2000;
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

/** Reads a signal's body ("code|reason", "code:reason", "intent: CODE, reason: angry"). */
function signalFromBody(body: string): IntentSignal {
  const tokens = body
    .split(/[\s|:,;=/]+/)
    .map((t) => t.replace(/^["'`]+|["'`.!]+$/g, "").toLowerCase())
    .filter(Boolean);
  const at = tokens.findIndex((t) => BranchCode.safeParse(t).success);
  if (at < 0) return { kind: "malformed", raw: body.trim().slice(0, RAW_CAP) };
  const rest = tokens.slice(at + 1).filter((t) => t !== "reason");
  const rawReason = rest[0] ?? null;
  const reason = rest.map((t) => EscalationReason.safeParse(t)).find((r) => r.success);
  return { kind: "ok", intent: BranchCode.parse(tokens[at]), reason: reason?.success ? reason.data : null, rawReason };
}

function signalFromJson(raw: string): IntentSignal {
  try {
    const v = JSON.parse(raw) as Record<string, unknown>;
    const ic = v.intent_change;
    if (typeof ic === "string") return signalFromBody(`${ic}|${typeof v.reason === "string" ? v.reason : ""}`);
    if (ic && typeof ic === "object") {
      const o = ic as Record<string, unknown>;
      const code = o.intent ?? o.code ?? o.to ?? o.branch;
      const reason = o.reason ?? v.reason;
      if (typeof code === "string") return signalFromBody(`${code}|${typeof reason === "string" ? reason : ""}`);
    }
  } catch {
    // fall through: malformed
  }
  return { kind: "malformed", raw: raw.slice(0, RAW_CAP) };
}

function stateFromJson(raw: string): TailState {
  try {
    const r = StateJson.safeParse(JSON.parse(raw));
    if (r.success) return { kind: "ok", value: r.data };
    return { kind: "malformed", raw: raw.slice(0, RAW_CAP), error: r.error.issues.map((i) => i.message).join("; ") };
  } catch (e) {
    return { kind: "malformed", raw: raw.slice(0, RAW_CAP), error: (e as Error).message };
  }
}

/** Cut markers inside the held gap (never part of model text in the gap, which holds only whitespace and fence debris). */
const CUT_SIGNAL = "\u0000";
const CUT_STATE = "\u0001";
/** A run of whitespace and backticks: what a gap is made of (besides "json" after backticks). */
const GAP_RUN = /[ \t\r\n`]+/g;

/** Normalizes a whitespace run: no spaces before a newline, at most one blank line. */
function normalizeWs(run: string): string {
  if (!run.includes("\n")) return run;
  return run.replace(/[ \t\r]+\n/g, "\n").replace(/\n{3,}/g, "\n\n");
}

/**
 * The patient-visible side. Whitespace and code-fence debris ("```json") are held as a gap until
 * the next visible character decides: a gap that touches a cut tail loses its fences and becomes
 * one separator; a gap at the start or the end of the reply is dropped (the reply is trimmed).
 */
function createVisible(out: (s: string) => void) {
  let started = false;
  let gap = "";
  let hasCut = false;
  /** -1: the gap does not end in a fence; n ≥ 0: it ends in backticks then n letters of "json". */
  let fence = -1;
  const flushGap = () => {
    if (!started) {
      gap = "";
    } else if (gap) {
      let g = gap;
      if (hasCut) {
        g = g
          .replace(/`+(?:j(?:s(?:o(?:n)?)?)?)?/gi, "")
          .replaceAll(CUT_SIGNAL, " ")
          .replaceAll(CUT_STATE, "\n");
        out(g.includes("\n") ? normalizeWs(g) : " ");
      } else {
        // The common gap is a space between words: nothing to normalize.
        out(g.includes("\n") ? g.replace(/[ \t\r\n]+/g, normalizeWs) : g);
      }
    }
    gap = "";
    hasCut = false;
    fence = -1;
  };
  return {
    text(s: string) {
      let pos = 0;
      while (pos < s.length) {
        // Letters of "json" right after backticks stay in the gap ("```json" is fence debris).
        if (fence >= 0 && fence < 4) {
          const from = pos;
          while (pos < s.length && fence < 4 && s[pos]!.toLowerCase() === "json"[fence]) ((gap += s[pos++]), fence++);
          if (pos > from) continue;
        }
        GAP_RUN.lastIndex = pos;
        const m = GAP_RUN.exec(s);
        const end = m ? m.index : s.length;
        if (end > pos) {
          // Visible text: it decides the pending gap, and ends any fence in progress ("`!json" is text).
          if (gap) flushGap();
          out(s.slice(pos, end));
          started = true;
          fence = -1;
        }
        if (!m) break;
        gap += m[0];
        fence = m[0].endsWith("`") ? 0 : -1;
        pos = end + m[0].length;
      }
    },
    cut(kind: "signal" | "state") {
      gap += kind === "signal" ? CUT_SIGNAL : CUT_STATE;
      hasCut = true;
      fence = -1;
    },
    /** The reply is over: a trailing gap (whitespace, a closing fence) is dropped. */
    end() {
      gap = "";
      hasCut = false;
    },
  };
}

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
      case "bracket": {
        const close = pending.indexOf("]");
        if (close < 0) {
          keep(pending);
          pending = "";
          return false;
        }
        keep(pending.slice(0, close));
        setSignal(signalFromBody(body));
        visible.cut("signal");
        pending = pending.slice(close + 1);
        prev = "]";
        enter("text");
        return true;
      }
      case "bare": {
        const nl = pending.indexOf("\n");
        if (nl < 0) {
          keep(pending);
          pending = "";
          return false;
        }
        keep(pending.slice(0, nl));
        setSignal(signalFromBody(body));
        visible.cut("signal");
        pending = pending.slice(nl);
        prev = "";
        enter("text");
        return true;
      }
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
  return {
    push(d: string): string {
      if (ended || !d) return "";
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
