import { initialStep, isStepped, isTerminalStep, stepSpec } from "./registry";
import { escalationReasonFromText } from "./escalation-reason";
import { parseRouterOutput } from "./router-output";
import { parseBranchOutput } from "./service-tail";
import { acuteRedFlags } from "./red-flags";
import { EMERGENCY_REPLY, EMPTY_REPLY_FALLBACK, LOOP_GUARD_REPLY } from "./templates";
import type { KnowledgeFragment } from "./prompt";
import type { BlockedGuard } from "./guards";
import type { BranchCode, ClinicState, EscalationReason, Registry, Slots, StepGraph, TurnEvent } from "./types";
import { HANDOFF_CAP } from "./types";

/**
 * The decisions of one clinic turn (seed 003, "Что происходит на каждой реплике"), as pure
 * functions over the thread state and the turn's scratch. The dialogue machine calls them from
 * its assign actions; nothing here does I/O.
 */

/**
 * Judges a proposed step move. The generated step machine (machines/booking-steps.ts) is passed in
 * by the dialogue machine, so this layer stays below machines/.
 */
export type StepJudge = (
  graph: StepGraph,
  step: string,
  slots: Slots,
  target: string,
  slotsUpdated: Slots,
) => {
  step: string;
  slots: Slots;
  outcome: { kind: "stayed" | "moved" } | { kind: "rejected"; from: string; target: string } | { kind: "guard_blocked"; guards: BlockedGuard[] };
};

/** Chained INTENT_CHANGE signals in one turn beyond this count are treated as a routing loop. */
export const MAX_BRANCH_CALLS_PER_TURN = 3;

export interface TurnScratch {
  text: string;
  events: TurnEvent[];
  /** The router's decision when a stepped branch keeps the dialogue (the [ПОДСКАЗКА РОУТЕРА] block). */
  hint: BranchCode | null;
  branchCalls: number;
  /** Patient-visible text of earlier calls in this turn (a branch may speak before handing off). */
  replyParts: string[];
  fragments: KnowledgeFragment[];
  /** Another branch call is due (after a handoff inside the turn). */
  pendingCall: boolean;
  /** Set when the turn ends without a (further) model call: the loop guard's template. */
  stop: boolean;
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
  stop: false,
  reply: null,
  notes: [],
});

const addEvent = (turn: TurnScratch, e: TurnEvent) => {
  if (!turn.events.includes(e)) turn.events.push(e);
};

const clone = (v: TurnView): TurnView => structuredClone(v);

/** A step that no longer exists in the (re-configured) graph falls back to the graph's initial step. */
function validStep(reg: Registry, branch: BranchCode, step: string | null): string | null {
  if (!isStepped(reg, branch)) return null;
  return step !== null && stepSpec(reg, branch, step) ? step : initialStep(reg, branch);
}

function enter(v: TurnView, reg: Registry, target: BranchCode, reason: EscalationReason | null): void {
  v.state.activeBranch = target;
  v.state.step = initialStep(reg, target);
  v.state.slots = {};
  v.state.softInsertionCount = 0;
  v.state.escalationReason = target === "escalate_human" ? reason : null;
  if (target === "escalate_human") addEvent(v.turn, "escalated");
}

function suspendActive(v: TurnView, reg: Registry): void {
  const { activeBranch, step, slots } = v.state;
  if (activeBranch !== null && isStepped(reg, activeBranch) && !isTerminalStep(reg, activeBranch, step)) {
    v.state.suspended = { intent: activeBranch, step, slots };
  }
}

function loopGuard(v: TurnView, reg: Registry): void {
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
}

function resume(v: TurnView, reg: Registry): void {
  const s = v.state.suspended!;
  const leaving = v.state.activeBranch;
  const swap = leaving !== null && leaving !== s.intent && isStepped(reg, leaving) && !isTerminalStep(reg, leaving, v.state.step) ? { intent: leaving, step: v.state.step, slots: v.state.slots } : null;
  v.state.activeBranch = s.intent;
  v.state.step = validStep(reg, s.intent, s.step);
  v.state.slots = s.slots;
  v.state.handoffCount = 0;
  v.state.softInsertionCount = 0;
  v.state.suspended = swap;
  v.state.escalationReason = null;
  addEvent(v.turn, "resumed");
}

/** A hard handoff: counted, capped by the loop guard, the stepped branch left behind is suspended. */
function handoff(v: TurnView, reg: Registry, target: BranchCode, reason: EscalationReason | null): void {
  if (v.state.handoffCount + 1 > HANDOFF_CAP) return loopGuard(v, reg);
  v.state.handoffCount += 1;
  suspendActive(v, reg);
  enter(v, reg, target, reason);
  addEvent(v.turn, "handoff");
}

/** After a routing_loop escalation the thread stays with the human: no switch (and no resume) gets out. */
const loopLocked = (s: ClinicState) => s.activeBranch === "escalate_human" && s.escalationReason === "routing_loop";
/**
 * A thread handed to a human (any reason) stays there until an operator releases it
 * (`releaseEscalation`): the router's decisions and the branch's signals no longer move it.
 */
export const escalationLocked = (s: ClinicState) => s.activeBranch === "escalate_human";

/** The acute red flags of the patient's message (clinic/red-flags.ts); the machine checks them before the router. */
export const hasRedFlag = (text: string): boolean => acuteRedFlags(text).length > 0;

/**
 * Patient safety above everything else: an acute red flag hands the thread to a human with
 * `acute_pain` and the fixed emergency reply, with no model call, whatever the loop guard's
 * counters or an earlier escalation say. Not a counted switch; a stepped branch left behind is
 * suspended so an operator's release can pick it up again.
 */
export function applySafetyEscalation(reg: Registry, view: TurnView): TurnView {
  const v = clone(view);
  if (v.state.activeBranch !== "escalate_human") suspendActive(v, reg);
  v.state.activeBranch = "escalate_human";
  v.state.routerDecision = null;
  v.state.step = null;
  v.state.slots = {};
  v.state.softInsertionCount = 0;
  v.state.escalationReason = "acute_pain";
  addEvent(v.turn, "red_flag");
  addEvent(v.turn, "escalated");
  v.turn.notes.push(`acute red flags: ${acuteRedFlags(v.turn.text).join(", ")} — emergency reply, no model call`);
  v.turn.stop = true;
  v.turn.pendingCall = false;
  v.turn.reply = EMERGENCY_REPLY;
  return v;
}

/**
 * An operator takes the thread back from the human queue: the escalation ends, the switch
 * counter starts again, and a booking suspended by the escalation resumes on the next turn the
 * router names it.
 */
export function releaseEscalation(state: ClinicState): ClinicState {
  if (state.activeBranch !== "escalate_human") return state;
  return { ...state, activeBranch: null, routerDecision: null, step: null, slots: {}, handoffCount: 0, softInsertionCount: 0, escalationReason: null };
}

/** Seed steps 1–4: the router's decision → resume, sticky, handoff or loop guard. */
export function applyRouterDecision(reg: Registry, view: TurnView, raw: string): TurnView {
  const v = clone(view);
  const decision = parseRouterOutput(raw);
  v.state.routerDecision = decision;
  const active = v.state.activeBranch;
  if (active !== null) v.state.step = validStep(reg, active, v.state.step);
  if (decision === null) {
    v.turn.notes.push(`router output not understood: ${JSON.stringify(raw.slice(0, 200))}`);
    if (active === null) enter(v, reg, "general_info", null);
  } else if (active === null && v.state.suspended?.intent === decision) {
    resume(v, reg);
  } else if (active === null) {
    enter(v, reg, decision, null);
  } else if (decision === active) {
    // Same branch: nothing to decide.
  } else if (loopLocked(v.state)) {
    loopGuard(v, reg);
  } else if (escalationLocked(v.state)) {
    // With the human until released: the escalation branch answers with a holding reply, the reason stays.
    v.turn.notes.push(`thread escalated (${v.state.escalationReason ?? "no reason"}): router decision ${decision} waits for an operator's release`);
  } else if (v.state.suspended && v.state.suspended.intent === decision) {
    resume(v, reg);
  } else if (isStepped(reg, active)) {
    v.turn.hint = decision;
    addEvent(v.turn, "sticky");
  } else {
    handoff(v, reg, decision, null);
  }
  v.turn.pendingCall = !v.turn.stop;
  return v;
}

export const needsKnowledge = (reg: Registry, v: TurnView): boolean => {
  const b = v.state.activeBranch;
  if (b === null) return false;
  const mode = reg.branches[b].knowledge;
  return mode === "always" || (mode === "side_questions" && v.turn.hint !== null);
};

const isEmpty = (o: object) => Object.keys(o).length === 0;

/** Seed step 6: parse the branch output, then INTENT_CHANGE → handoff, or STATE_JSON → validator and guards. */
export function applyBranchOutput(reg: Registry, view: TurnView, text: string, judge: StepJudge): TurnView {
  const v = clone(view);
  const parsed = parseBranchOutput(text);
  v.turn.branchCalls += 1;
  v.turn.pendingCall = false;
  const active = v.state.activeBranch!;
  const signal = parsed.intentChange;
  if (signal.kind === "malformed") {
    v.turn.notes.push(`INTENT_CHANGE not understood: ${signal.raw}`);
    addEvent(v.turn, "tail_malformed");
  }
  // A branch without exit conditions (escalate_human) has no way out by its own signal.
  const canExit = reg.branches[active].exit_conditions.length > 0;
  if (signal.kind === "ok" && signal.intent !== active && (!canExit || loopLocked(v.state) || escalationLocked(v.state))) {
    v.turn.notes.push(`INTENT_CHANGE ${signal.intent} ignored: ${canExit ? "the thread is with a human until an operator releases it" : `${active} has no exit conditions`}`);
    addEvent(v.turn, "signal_ignored");
  }
  if (signal.kind === "ok" && canExit && signal.intent !== active && !loopLocked(v.state) && !escalationLocked(v.state)) {
    if (parsed.visible) v.turn.replyParts.push(parsed.visible);
    v.turn.hint = null;
    v.turn.fragments = [];
    if (v.turn.branchCalls >= MAX_BRANCH_CALLS_PER_TURN) loopGuard(v, reg);
    else if (v.state.suspended && v.state.suspended.intent === signal.intent) resume(v, reg);
    else handoff(v, reg, signal.intent, signal.reason);
    v.turn.pendingCall = !v.turn.stop;
    return v;
  }
  const spoken = [...v.turn.replyParts, parsed.visible].filter(Boolean).join("\n\n");
  // A reply that was only a service tail: ask the question of the step the dialogue is now at
  // (the one being entered, after the validator), not of the step just left.
  const finish = (): TurnView => {
    v.turn.reply = spoken || stepSpec(reg, active, v.state.step)?.question || EMPTY_REPLY_FALLBACK;
    return v;
  };
  const spec = stepSpec(reg, active, v.state.step);
  const graph = reg.stepGraphs[active];
  if (graph && spec) {
    if (parsed.state.kind !== "ok") {
      if (parsed.state.kind === "malformed") {
        v.turn.notes.push(`STATE_JSON malformed (${parsed.state.error}); step and slots kept`);
        addEvent(v.turn, "tail_malformed");
      }
      v.state.softInsertionCount = 0;
      return finish();
    }
    const { state_after, slots_updated, soft_insertion } = parsed.state.value;
    const target = state_after ?? spec.code;
    if (soft_insertion && target === spec.code && isEmpty(slots_updated)) {
      v.state.softInsertionCount += 1;
      addEvent(v.turn, "soft_insertion");
      return finish();
    }
    const r = judge(graph, spec.code, v.state.slots, target, slots_updated);
    v.state.slots = r.slots;
    v.state.step = r.step;
    v.state.softInsertionCount = 0;
    if (r.outcome.kind === "rejected") {
      addEvent(v.turn, "transition_rejected");
      v.turn.notes.push(`transition ${r.outcome.from} → ${r.outcome.target} is not in allowed_next`);
    } else if (r.outcome.kind === "guard_blocked") {
      for (const g of r.outcome.guards) {
        addEvent(v.turn, `guard_blocked:${g.name}`);
        v.turn.notes.push(`🔒 защитное условие ${g.name} не пройдено — ждём: ${g.missing.join(", ")}`);
      }
    }
  } else if (active === "escalate_human" && v.state.escalationReason === null && parsed.state.kind === "ok" && parsed.state.value.escalation_reason) {
    v.state.escalationReason = parsed.state.value.escalation_reason;
  } else if (parsed.state.kind === "malformed") {
    v.turn.notes.push(`STATE_JSON malformed (${parsed.state.error})`);
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
  return finish();
}
