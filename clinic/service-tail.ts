import { z } from "zod";
import { BranchCode, EscalationReason } from "./types";

/**
 * The branch's service tail (seed 003, CONTRACT §5.2): `STATE_JSON: {...}` and
 * `[INTENT_CHANGE: code|reason]`. Both are cut out of the text before the patient sees it;
 * `createTailFilter` does the same for the token stream.
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
  | { kind: "none" }
  | { kind: "ok"; value: StateJson }
  | { kind: "malformed"; raw: string; error: string };

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

const STATE_MARKER = /STATE_JSON\s*:?/i;
const SIGNAL = /[ \t]*\[\s*INTENT_CHANGE\s*:?([^\]]*)\][ \t]*/gi;
/** Regexes for a marker's beginning at the very end of the buffer. */
const nested = (word: string) => word.split("").reduceRight((acc, ch) => `${ch.replace(/[[\]]/g, "\\$&")}(?:${acc})?`, "");
const PARTIALS = [new RegExp(`${nested("STATE_JSON")}$`, "i"), new RegExp(`\\[\\s*(?:${nested("INTENT_CHANGE")})?$`, "i")];

/** Index just past the balanced JSON object starting at `from` (first `{`), or -1. */
function objectEnd(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return i + 1;
  }
  return -1;
}

/** Drops code-fence and backtick debris a model leaves around a removed tail. */
const tidy = (s: string) =>
  s
    .replace(/`{1,3}(?:json)?\s*$/i, "")
    .replace(/^\s*`{1,3}/, "")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();

function parseSignal(body: string): IntentSignal {
  const [rawCode = "", rawReason] = body.split("|").map((p) => p.trim());
  const code = BranchCode.safeParse(rawCode.replace(/^["'`]|["'`]$/g, ""));
  if (!code.success) return { kind: "malformed", raw: body.trim() };
  const reason = rawReason ? EscalationReason.safeParse(rawReason) : null;
  return { kind: "ok", intent: code.data, reason: reason?.success ? reason.data : null, rawReason: rawReason ?? null };
}

export function parseBranchOutput(text: string): ParsedBranchOutput {
  let intentChange: IntentSignal = { kind: "none" };
  // The first well-formed signal decides; a malformed one is remembered only if nothing better comes.
  let body = text.replace(SIGNAL, (_m, inner: string) => {
    const sig = parseSignal(inner);
    if (intentChange.kind !== "ok") intentChange = sig.kind === "ok" || intentChange.kind === "none" ? sig : intentChange;
    return " ";
  });
  // An unclosed signal at the end is service text too.
  const open = body.search(/\[\s*INTENT_CHANGE/i);
  if (open >= 0) {
    if (intentChange.kind === "none") intentChange = { kind: "malformed", raw: body.slice(open) };
    body = body.slice(0, open);
  }

  let state: TailState = { kind: "none" };
  const m = STATE_MARKER.exec(body);
  if (m) {
    const before = body.slice(0, m.index);
    let rest = body.slice(m.index);
    let after = "";
    // Several tails: the last well-formed one wins; everything from the first marker is service text.
    for (let at = 0; at < rest.length; ) {
      const mm = STATE_MARKER.exec(rest.slice(at));
      if (!mm) break;
      const markerEnd = at + mm.index + mm[0].length;
      const brace = rest.indexOf("{", markerEnd);
      const end = brace >= 0 && /^[\s`json]*$/i.test(rest.slice(markerEnd, brace)) ? objectEnd(rest, brace) : -1;
      if (end < 0) {
        if (state.kind !== "ok") state = { kind: "malformed", raw: rest.slice(at + mm.index).trim(), error: "no complete JSON object after STATE_JSON" };
        after = "";
        break;
      }
      const raw = rest.slice(brace, end);
      let parsed: StateJson | null = null;
      let error = "";
      try {
        const r = StateJson.safeParse(JSON.parse(raw));
        if (r.success) parsed = r.data;
        else error = r.error.issues.map((i) => i.message).join("; ");
      } catch (e) {
        error = (e as Error).message;
      }
      state = parsed ? { kind: "ok", value: parsed } : { kind: "malformed", raw, error };
      after = rest.slice(end);
      at = end;
    }
    after = after.replace(/^\s*`{1,3}/, "");
    body = STATE_MARKER.test(after) ? before : `${before}\n${after}`;
    rest = "";
  }
  return { visible: tidy(body), state, intentChange };
}

/** Index from which `buf` must be held back: a tail has begun, or its suffix could begin one. */
export function holdIndex(buf: string): number {
  let hold = buf.length;
  const sm = STATE_MARKER.exec(buf);
  if (sm) hold = sm.index;
  // An opened but unclosed signal.
  const openRe = /\[\s*INTENT_CHANGE/gi;
  for (let mm; (mm = openRe.exec(buf)); ) {
    if (buf.indexOf("]", mm.index) < 0) {
      hold = Math.min(hold, mm.index);
      break;
    }
  }
  // A suffix that is a prefix of a marker ("ST", "[INT", "[ INTENT_CH").
  for (const partial of PARTIALS) {
    const m = partial.exec(buf);
    if (m) hold = Math.min(hold, m.index);
  }
  // Backticks ("```json") and whitespace may open a fenced tail; hold them until the next visible character.
  const trailing = /\s*(?:`{1,3}[a-z]{0,4})?[\s`]*$/i.exec(buf.slice(0, hold));
  if (trailing) hold = Math.min(hold, trailing.index);
  return hold;
}

/**
 * Streams only what is surely patient text. `push` returns the delta to forward (possibly "");
 * `end` returns the last piece once the whole output is known.
 */
export function createTailFilter() {
  let buf = "";
  let emitted = "";
  const forward = (visible: string) => {
    if (!visible.startsWith(emitted) || visible.length === emitted.length) return "";
    const delta = visible.slice(emitted.length);
    emitted = visible;
    return delta;
  };
  return {
    push(delta: string): string {
      buf += delta;
      return forward(parseBranchOutput(buf.slice(0, holdIndex(buf))).visible);
    },
    end(): string {
      return forward(parseBranchOutput(buf).visible);
    },
    get emitted() {
      return emitted;
    },
    get raw() {
      return buf;
    },
  };
}
