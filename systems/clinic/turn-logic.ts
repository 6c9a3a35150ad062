import { initialStep, isStepped, isTerminalStep, stepSpec } from "./registry";
import { escalationReasonFromText } from "./escalation-reason";
import type { ParsedBranchOutput } from "./tail-read";
import { decisionOf, redFlagsOf } from "./turn-guards";
import { plainClone } from "./plain-clone";
import { EMERGENCY_REPLY, EMPTY_REPLY_FALLBACK, LOOP_GUARD_REPLY } from "./templates";
import type { KnowledgeFragment } from "./prompt";
import type { BlockedGuard } from "./guards";
import {
  initialClinicState,
  type BranchCode,
  type ClinicState,
  type EscalationReason,
  type Registry,
  type Slots,
  type TurnEvent,
} from "./types";

/**
 * What each decision of a clinic turn (seed 003, "Что происходит на каждой реплике") does to the
 * thread state and the turn's scratch, as pure functions. WHICH decision is taken — resume,
 * sticky hold, hard handoff, loop guard, soft insertion, the validator — is not decided here: it
 * is the order of the guarded transitions of the dialogue machine (machines/clinic-dialogue.ts),
 * whose guards read the predicates of turn-guards.ts.
 */

/** Chained INTENT_CHANGE signals in one turn beyond this count are treated as a routing loop. */
export const MAX_BRANCH_CALLS_PER_TURN = 3;

export interface TurnScratch {
  text: string;
  events: TurnEvent[];
  /** The router's decision when a stepped branch keeps the dialogue (the [ПОДСКАЗКА РОУТЕРА] block). */
  hint: BranchCode | null;
  /** Branch calls requested so far this turn (counted when the call is emitted). */
  branchCalls: number;
  /** Patient-visible text of earlier calls in this turn (a branch may speak before handing off). */
  replyParts: string[];
  fragments: KnowledgeFragment[];
  /** Another branch call is due (after a handoff inside the turn). */
  pendingCall: boolean;
  /** The branch's STATE_JSON proposal is on its way to the nested step graph (a raised `step.propose`). */
  stepPending: boolean;
  /** Set when the turn ends without a (further) model call: the loop guard's template, the emergency reply. */
  stop: boolean;
  /** What the branch calls of this turn said to the patient, joined; null before a call was read. */
  spoken: string | null;
  reply: string | null;
  /** For the debug output: malformed tails, rejected proposals, guard details. */
  notes: string[];
}

export interface TurnView {
  state: ClinicState;
  turn: TurnScratch;
}

export const newTurn = (text: string): TurnScratch => ({
  text,
  events: [],
  hint: null,
  branchCalls: 0,
  replyParts: [],
  fragments: [],
  pendingCall: false,
  stepPending: false,
  stop: false,
  spoken: null,
  reply: null,
  notes: [],
});

const addEvent = (turn: TurnScratch, e: TurnEvent) => {
  if (!turn.events.includes(e)) turn.events.push(e);
};

/** Every change works on a copy: the machine's assigns stay pure. */
const change = (view: TurnView, f: (v: TurnView) => void): TurnView => {
  const v = plainClone(view);
  f(v);
  return v;
};

// ── What the transitions do ────────────────────────────────────────────────────────────────

/** A step that no longer exists in the (re-configured) graph falls back to the graph's initial step. */
export function validStep(reg: Registry, branch: BranchCode | null, step: string | null): string | null {
  if (branch === null || !isStepped(reg, branch)) return null;
  return step !== null && stepSpec(reg, branch, step) ? step : initialStep(reg, branch);
}

function enterBranch(v: TurnView, reg: Registry, target: BranchCode, reason: EscalationReason | null): void {
  v.state.activeBranch = target;
  v.state.step = initialStep(reg, target);
  v.state.slots = {};
  v.state.softInsertionCount = 0;
  v.state.escalationReason = target === "escalate_human" ? reason : null;
  if (target === "escalate_human") addEvent(v.turn, "escalated");
}

/** A stepped branch left mid-scenario is kept for a resume; a finished one (terminal step) is not. */
function suspendActive(v: TurnView, reg: Registry): void {
  const { activeBranch, step, slots } = v.state;
  if (activeBranch !== null && isStepped(reg, activeBranch) && !isTerminalStep(reg, activeBranch, step)) {
    v.state.suspended = { intent: activeBranch, step, slots };
  }
}

/** Every router answer: the decision is shown, and a step gone from the settings falls back to the initial one. */
export const hearRouter = (reg: Registry, view: TurnView, raw: { text: string }): TurnView =>
  change(view, (v) => {
    const decision = decisionOf(raw);
    v.state.routerDecision = decision;
    if (v.state.activeBranch !== null) v.state.step = validStep(reg, v.state.activeBranch, v.state.step);
    if (decision === null) v.turn.notes.push(`router output not understood: ${JSON.stringify(raw.text.slice(0, 200))}`);
  });

/** The first branch of a thread (or after an operator's release): not a counted switch. */
export const enter = (reg: Registry, view: TurnView, target: BranchCode): TurnView =>
  change(view, (v) => enterBranch(v, reg, target, null));

/** Seed step 3: the stepped branch keeps the dialogue; the router's decision goes into its prompt as a hint. */
export const holdSticky = (view: TurnView, decision: BranchCode): TurnView =>
  change(view, (v) => {
    v.turn.hint = decision;
    addEvent(v.turn, "sticky");
  });

/** With the human until released: the escalation branch answers with a holding reply, the reason stays. */
export const holdWithHuman = (view: TurnView, decision: BranchCode | null): TurnView =>
  change(view, (v) => {
    v.turn.notes.push(
      `thread escalated (${v.state.escalationReason ?? "no reason"}): router decision ${decision} waits for an operator's release`,
    );
  });

/** Seed step 2: the suspended scenario comes back with its step and slots; the switch counter restarts. */
export const resume = (reg: Registry, view: TurnView): TurnView =>
  change(view, (v) => {
    const s = v.state.suspended!;
    const leaving = v.state.activeBranch;
    const swap =
      leaving !== null && leaving !== s.intent && isStepped(reg, leaving) && !isTerminalStep(reg, leaving, v.state.step)
        ? { intent: leaving, step: v.state.step, slots: v.state.slots }
        : null;
    v.state.activeBranch = s.intent;
    v.state.step = validStep(reg, s.intent, s.step);
    v.state.slots = s.slots;
    v.state.handoffCount = 0;
    v.state.softInsertionCount = 0;
    v.state.suspended = swap;
    v.state.escalationReason = null;
    addEvent(v.turn, "resumed");
  });

/** Seed step 4: a hard handoff, counted; a stepped branch left behind is suspended. The cap is the loop guard's transition. */
export const handoff = (reg: Registry, view: TurnView, target: BranchCode, reason: EscalationReason | null): TurnView =>
  change(view, (v) => {
    v.state.handoffCount += 1;
    suspendActive(v, reg);
    enterBranch(v, reg, target, reason);
    addEvent(v.turn, "handoff");
  });

/** Seed step 4 past the cap: escalate_human with routing_loop and the template, no (further) model call. */
export const loopGuard = (reg: Registry, view: TurnView): TurnView =>
  change(view, (v) => {
    addEvent(v.turn, "loop_guard");
    if (v.state.activeBranch !== "escalate_human") suspendActive(v, reg);
    v.state.activeBranch = "escalate_human";
    v.state.step = null;
    v.state.slots = {};
    v.state.softInsertionCount = 0;
    v.state.escalationReason = "routing_loop";
    addEvent(v.turn, "escalated");
    v.turn.stop = true;
    v.turn.pendingCall = false;
    v.turn.reply = [...v.turn.replyParts, LOOP_GUARD_REPLY].join("\n\n");
  });

/**
 * Patient safety above everything else: an acute red flag hands the thread to a human with
 * `acute_pain` and the fixed emergency reply, with no model call, whatever the loop guard's
 * counters or an earlier escalation say. Not a counted switch; a stepped branch left behind is
 * suspended so an operator's release can pick it up again.
 */
export const safetyEscalation = (reg: Registry, state: ClinicState, message: { text: string }): TurnView =>
  change({ state, turn: newTurn(message.text) }, (v) => {
    if (v.state.activeBranch !== "escalate_human") suspendActive(v, reg);
    v.state.activeBranch = "escalate_human";
    v.state.routerDecision = null;
    v.state.step = null;
    v.state.slots = {};
    v.state.softInsertionCount = 0;
    v.state.escalationReason = "acute_pain";
    addEvent(v.turn, "red_flag");
    addEvent(v.turn, "escalated");
    v.turn.notes.push(`acute red flags: ${redFlagsOf(message).join(", ")} — emergency reply, no model call`);
    v.turn.stop = true;
    v.turn.reply = EMERGENCY_REPLY;
  });

/**
 * An operator takes the thread back from the human queue: the escalation ends, the switch
 * counter starts again, and a booking suspended by the escalation resumes on the next turn the
 * router names it.
 */
export function releaseEscalation(state: ClinicState): ClinicState {
  if (state.activeBranch !== "escalate_human") return state;
  // A fresh thread's state, but for the booking the escalation suspended.
  return { ...initialClinicState(), suspended: state.suspended };
}

/** A branch handed off by its own signal: its words so far stay in the reply; the next branch gets no hint or fragments. */
export const takeSignal = (view: TurnView, tail: ParsedBranchOutput): TurnView =>
  change(view, (v) => {
    if (tail.visible) v.turn.replyParts.push(tail.visible);
    v.turn.hint = null;
    v.turn.fragments = [];
  });

/** The next branch is called within the same turn (after a handoff or a resume by signal). */
export const callNext = (view: TurnView): TurnView => change(view, (v) => void (v.turn.pendingCall = true));

/** The branch's answer stays with it: what it said is the reply; a malformed or ignored signal is noted. */
export const hearBranch = (reg: Registry, view: TurnView, tail: ParsedBranchOutput): TurnView =>
  change(view, (v) => {
    const signal = tail.intentChange;
    const active = v.state.activeBranch!;
    if (signal.kind === "malformed") {
      v.turn.notes.push(`INTENT_CHANGE not understood: ${signal.raw}`);
      addEvent(v.turn, "tail_malformed");
    }
    if (signal.kind === "ok" && signal.intent !== active) {
      const canExit = reg.branches[active].exit_conditions.length > 0;
      v.turn.notes.push(
        `INTENT_CHANGE ${signal.intent} ignored: ${canExit ? "the thread is with a human until an operator releases it" : `${active} has no exit conditions`}`,
      );
      addEvent(v.turn, "signal_ignored");
    }
    v.turn.spoken = [...v.turn.replyParts, tail.visible].filter(Boolean).join("\n\n");
  });

/** A stepped branch answered without a usable STATE_JSON: step and slots kept, the soft-insertion run ends. */
export const keepStep = (view: TurnView, tail: ParsedBranchOutput): TurnView =>
  change(view, (v) => {
    if (tail.state.kind === "malformed") {
      v.turn.notes.push(`STATE_JSON malformed (${tail.state.error}); step and slots kept`);
      addEvent(v.turn, "tail_malformed");
    }
    v.state.softInsertionCount = 0;
  });

/** Seed: a side question answered inside the scenario; three in a row bring the hard "return to the step" instruction. */
export const softInsertion = (view: TurnView): TurnView =>
  change(view, (v) => {
    v.state.softInsertionCount += 1;
    addEvent(v.turn, "soft_insertion");
  });

/** The step proposal of STATE_JSON, for the nested step graph (`step.propose`). */
export function proposalOf(s: ClinicState, tail: ParsedBranchOutput): { target: string; slotsUpdated: Slots } {
  const value = tail.state.kind === "ok" ? tail.state.value : { state_after: undefined, slots_updated: {} };
  return { target: value.state_after ?? s.step ?? "", slotsUpdated: value.slots_updated };
}

export type StepVerdict =
  | { kind: "stayed" | "moved" }
  | { kind: "rejected"; from: string; target: string }
  | { kind: "guard_blocked"; guards: BlockedGuard[] };

/**
 * The nested step graph judged the proposal (transition validator and guards): the slots are
 * merged whatever the verdict, the step is the graph's, a rejection or a blocked guard is told.
 */
export function settleStep(view: TurnView, step: string, slots: Slots, verdict: StepVerdict): TurnView {
  return change(view, (v) => {
    v.state.slots = slots;
    v.state.step = step;
    v.state.softInsertionCount = 0;
    v.turn.stepPending = false;
    if (verdict.kind === "rejected") {
      addEvent(v.turn, "transition_rejected");
      v.turn.notes.push(`transition ${verdict.from} → ${verdict.target} is not in allowed_next`);
    } else if (verdict.kind === "guard_blocked") {
      for (const g of verdict.guards) {
        addEvent(v.turn, `guard_blocked:${g.name}`);
        v.turn.notes.push(`🔒 защитное условие ${g.name} не пройдено — ждём: ${g.missing.join(", ")}`);
      }
    }
  });
}

/** A branch without steps: escalate_human may name its reason in STATE_JSON; a malformed tail is noted. */
export const readPlainTail = (view: TurnView, tail: ParsedBranchOutput): TurnView =>
  change(view, (v) => {
    const active = v.state.activeBranch;
    if (
      active === "escalate_human" &&
      v.state.escalationReason === null &&
      tail.state.kind === "ok" &&
      tail.state.value.escalation_reason
    ) {
      v.state.escalationReason = tail.state.value.escalation_reason;
    } else if (tail.state.kind === "malformed") {
      v.turn.notes.push(`STATE_JSON malformed (${tail.state.error})`);
      addEvent(v.turn, "tail_malformed");
    }
    if (active === "escalate_human" && v.state.escalationReason === null) {
      // Handed to a human and nobody named why: the operator still gets a reason when the
      // patient's words state one plainly (clinic/escalation-reason.ts).
      const inferred = escalationReasonFromText(v.turn.text);
      if (inferred) {
        v.state.escalationReason = inferred;
        v.turn.notes.push(`escalation_reason ${inferred} inferred from the patient's message (the model named none)`);
      }
    }
  });

/**
 * The reply of a turn that ended after a branch call: what was said, or — a reply that was only a
 * service tail — the question of the step the dialogue is now at (after the validator).
 */
export const composeReply = (reg: Registry, view: TurnView): TurnView =>
  change(view, (v) => {
    if (v.turn.reply !== null) return;
    v.turn.reply = v.turn.spoken || stepSpec(reg, v.state.activeBranch, v.state.step)?.question || EMPTY_REPLY_FALLBACK;
  });
