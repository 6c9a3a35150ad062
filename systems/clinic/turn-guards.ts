import { parseRouterOutput } from "./router-output";
import { parseBranchOutput } from "./service-tail";
import type { ParsedBranchOutput } from "./tail-read";
import { acuteRedFlags } from "./red-flags";
import type { TurnView } from "./turn-logic";
import type { BranchCode, ClinicState, Registry } from "./types";
import { HANDOFF_CAP } from "./types";

/**
 * What the clinic dialogue machine's guards read: the router's and the branch's text parsed once
 * per event, and the predicates that choose among the guarded transitions (seed 003). Pure;
 * turn-logic.ts holds what the chosen transition does.
 */

// ── Parsed once per event ────────────────────────────────────────────────────────────────────
// The router's and the branch's text are parsed where the machine first reads them; the guards of
// one transition (and its actions) share the result, keyed by the event object.

const routed = new WeakMap<object, BranchCode | null>();
const tails = new WeakMap<object, ParsedBranchOutput>();

/** `read(event)` computed once per event object: the memo's value, or the one just stored. */
function once<T>(memo: WeakMap<object, T>, event: object, read: () => T): T {
  if (!memo.has(event)) memo.set(event, read());
  return memo.get(event) as T;
}

/** The router's decision in a `router.result` event (CONTRACT §5.2: a code or `{"intent": …}`; anything else is none). */
export const decisionOf = (event: { text: string }): BranchCode | null =>
  once(routed, event, () => parseRouterOutput(event.text));

/** The branch's reply split into visible text, STATE_JSON and INTENT_CHANGE (clinic/service-tail.ts). */
export const tailOf = (event: { text: string }): ParsedBranchOutput =>
  once(tails, event, () => parseBranchOutput(event.text));

/**
 * A `branch.result` for a text the effect handler already read through the tail filter while it
 * streamed (turn-effects.ts): the guards take that reading instead of parsing the text again —
 * the incremental filter's result equals the whole-text parse over any chunking (property test in
 * service-tail.test.ts). The event itself is the text alone: the log stores that, and a replay
 * parses it anew. `parsed` null: nothing read yet, the guards parse it.
 */
export function branchResult(text: string, parsed: ParsedBranchOutput | null): { type: "branch.result"; text: string } {
  const event = { type: "branch.result" as const, text };
  if (parsed) tails.set(event, parsed);
  return event;
}

// ── Predicates the machine's guards read ───────────────────────────────────────────────────

const flagged = new WeakMap<object, string[]>();

/** The acute red flags of a `patient.message` (clinic/red-flags.ts), read once per event: both regions' guards ask. */
export const redFlagsOf = (event: { text: string }): string[] => once(flagged, event, () => acuteRedFlags(event.text));

/** Whether the patient's message carries an acute red flag; checked before the router. */
export const hasRedFlag = (event: { text: string }): boolean => redFlagsOf(event).length > 0;

/** After a routing_loop escalation the thread stays with the human: any switch gets the template again. */
export const loopLocked = (s: ClinicState) =>
  s.activeBranch === "escalate_human" && s.escalationReason === "routing_loop";
/**
 * A thread handed to a human (any reason) stays there until an operator releases it
 * (`releaseEscalation`): the router's decisions and the branch's signals no longer move it.
 */
export const escalationLocked = (s: ClinicState) => s.activeBranch === "escalate_human";

/** One more counted switch would pass the cap of seed 003: the loop guard takes it instead. */
export const loopGuardTrips = (s: ClinicState) => s.handoffCount + 1 > HANDOFF_CAP;

/** A well-formed INTENT_CHANGE that moves the dialogue: another branch, a branch that may exit, a thread not with a human. */
export function signalLeaves(reg: Registry, s: ClinicState, tail: ParsedBranchOutput): BranchCode | null {
  const sig = tail.intentChange;
  const active = s.activeBranch;
  if (sig.kind !== "ok" || active === null || sig.intent === active) return null;
  // A branch without exit conditions (escalate_human) has no way out by its own signal.
  if (reg.branches[active].exit_conditions.length === 0 || escalationLocked(s)) return null;
  return sig.intent;
}

const isEmpty = (o: object) => Object.keys(o).length === 0;

/** Seed: flag + the same step + no slots = a side question answered without moving the scenario. */
export function isSoftInsertion(s: ClinicState, tail: ParsedBranchOutput): boolean {
  if (tail.state.kind !== "ok") return false;
  const { state_after, slots_updated, soft_insertion } = tail.state.value;
  return soft_insertion === true && (state_after ?? s.step) === s.step && isEmpty(slots_updated);
}

export const needsKnowledge = (reg: Registry, v: TurnView): boolean => {
  const b = v.state.activeBranch;
  if (b === null) return false;
  const mode = reg.branches[b].knowledge;
  return mode === "always" || (mode === "side_questions" && v.turn.hint !== null);
};
