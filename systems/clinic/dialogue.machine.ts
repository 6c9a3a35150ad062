import { emit, raise, setup } from "xstate";
import { assign } from "../../driver/assign";
import { memoizeResolve } from "../../driver/resolve-memo";
import { stepGuards } from "./booking-steps.machine";
import type { StepEvent, StepHost, StepOutcome } from "./booking-steps.machine";
import { buildBranchSystemPrompt } from "./prompt";
import type { KnowledgeFragment } from "./prompt";
import { stepSpec } from "./registry";
import {
  callNext,
  composeReply,
  enter,
  handoff,
  hearBranch,
  hearRouter,
  holdSticky,
  holdWithHuman,
  keepStep,
  loopGuard,
  MAX_BRANCH_CALLS_PER_TURN,
  newTurn,
  proposalOf,
  readPlainTail,
  releaseEscalation,
  resume,
  safetyEscalation,
  settleStep,
  softInsertion,
  takeSignal,
} from "./turn-logic";
import {
  decisionOf,
  hasRedFlag,
  isSoftInsertion,
  loopGuardTrips,
  loopLocked,
  needsKnowledge,
  signalLeaves,
  tailOf,
} from "./turn-guards";
import type { TurnScratch, TurnView } from "./turn-logic";
import { initialClinicState } from "./types";
import { guardRestore, MACHINE_ID } from "./dialogue-restore";
import { handlerRegion, patientRegion, turnRegion } from "./dialogue-regions";
import { heldAnswer, releaseToSuspended, suspendedIs } from "./human";
import type { HeldMessage, HumanEvent, HumanHold } from "./human";
import type { BranchCode, ClinicState, Registry, TurnEvent } from "./types";

/**
 * The clinic thread as a statechart generated from the registry (seed 003, "Что происходит на
 * каждой реплике"). Two regions:
 * - `patient` — where the patient is: `unrouted` or one state per branch; a stepped branch holds
 *   its step graph (generated from the configured steps, allowed_next and guards, as in
 *   machines/booking-steps.ts) and a history state `H`, which a resume enters. Resume, sticky hold,
 *   hard handoff, the loop guard, soft insertion, red-flag escalation and operator release are its
 *   guarded transitions, in the seed's order; the counters live in the thread state in context.
 * - `turn` — what the turn waits for: idle → routing → (retrieving) → calling → afterBranch → idle.
 *   Model calls and retrieval are `effect.*` emits answered by the driver with events; a model
 *   failure is the `model.failed` event and ends the turn in `failed`, which the driver does not store.
 * - `handler` — who answers: `bot`, or `human` after an operator took the thread (issue 32): then a
 *   patient's message gets the holding reply with no model call, `operator.message` is accepted,
 *   and release/close go back to `bot` (an escalation's suspended booking resumes at its step).
 * Between turns the snapshot reads e.g. `{patient: {new_booking: "qualify"}, turn: "idle", handler: "bot"}`.
 */

export interface DialogueContext {
  /** CONTRACT §5.3 thread state; `patient`'s state value mirrors its branch and step. */
  state: ClinicState;
  /** Scratch of the turn in progress; null between turns, so a snapshot holds control state only. */
  turn: TurnScratch | null;
  /** The operator who holds the thread (`handler.human`); null while the bot answers. */
  human: HumanHold | null;
  /**
   * Who answers this thread (issue 43): set by an assignment, a take or a transfer; cleared when
   * the thread goes back to the bot (release, close). Version 3 snapshots get it on migration.
   */
  assignee: string | null;
}

export type DialogueEvent =
  | ({ type: "patient.message"; text: string } & HeldMessage)
  | { type: "router.result"; text: string }
  | { type: "retrieve.result"; fragments: KnowledgeFragment[] }
  | { type: "branch.result"; text: string }
  /** The router or the branch model could not be reached (after the client's retry). */
  | { type: "model.failed"; role: "router" | "branch"; message: string }
  /** An operator takes, writes into, releases or closes the thread (systems/clinic/human.ts). */
  | HumanEvent
  /** Raised by the machine itself: the branch's STATE_JSON proposal, judged by the nested step graph. */
  | StepEvent;

export type DialogueEmitted =
  | { type: "effect.router"; text: string }
  | { type: "effect.retrieve"; branch: BranchCode; query: string }
  | { type: "effect.branch"; branch: BranchCode; system: string; text: string; call: number; hint: BranchCode | null }
  /** The router's decision as the machine read it (the SSE `router_decision`). */
  | { type: "clinic.routed"; intent: BranchCode | null }
  | {
      type: "clinic.final";
      reply: string;
      state: ClinicState;
      events: TurnEvent[];
      notes: string[];
      fragments: KnowledgeFragment[];
      /** An operator holds the thread (the operator's page is told of the patient's message). */
      withHuman: boolean;
    }
  | { type: "clinic.failed"; role: "router" | "branch"; message: string };

/**
 * 4: `assignee` in context, the assignment and transfer events (issue 43); 3: the `handler` region (bot | human) of issue 32; 2: the statechart of seed 003 (issue 15);
 * 1 was six I/O phases around an if/else ladder. Migrations: dialogue-restore.ts.
 */
export const CLINIC_DIALOGUE_VERSION = 4;

export interface DialogueOptions {
  /** CLINIC_ROUTER_HINT: a stepped branch holding the dialogue gets the [ПОДСКАЗКА РОУТЕРА] block. */
  routerHint?: boolean;
}

const view = (c: DialogueContext): TurnView => ({ state: c.state, turn: c.turn! });
const text = (e: DialogueEvent) => e as { text: string };
const branchOf = (params: unknown) => (params as { branch: BranchCode }).branch;
const put = (v: TurnView): Partial<DialogueContext> => ({ state: v.state, turn: v.turn });

/** The nested step graphs read and record through the thread state. */
const host: StepHost<DialogueContext> = {
  slots: (c) => c.state.slots,
  settle: (c, slots, outcome: StepOutcome) => {
    const step = outcome.kind === "moved" ? outcome.to : c.state.step!;
    const verdict =
      outcome.kind === "rejected"
        ? outcome
        : outcome.kind === "guard_blocked"
          ? { kind: outcome.kind, guards: outcome.guards }
          : { kind: outcome.kind };
    return put(settleStep(view(c), step, slots, verdict));
  },
};

export function createClinicDialogueMachine(registry: Registry, options: DialogueOptions = {}) {
  const routerHint = options.routerHint ?? true;
  const decision = (e: DialogueEvent) => decisionOf(text(e));
  const leaves = (c: DialogueContext, e: DialogueEvent) => signalLeaves(registry, c.state, tailOf(text(e)));

  const branchEffect = ({ context }: { context: DialogueContext }): DialogueEmitted => {
    const hint = context.turn!.hint;
    return {
      type: "effect.branch",
      branch: context.state.activeBranch!,
      system: buildBranchSystemPrompt({
        registry,
        state: context.state,
        hint: routerHint ? hint : null,
        fragments: context.turn!.fragments,
      }),
      text: context.turn!.text,
      call: context.turn!.branchCalls,
      hint,
    };
  };

  const machine = setup({
    types: {} as { context: DialogueContext; events: DialogueEvent; emitted: DialogueEmitted },
    actions: {
      startTurn: assign({ turn: ({ event }) => newTurn(text(event).text) }),
      safety: assign(({ context, event }) => put(safetyEscalation(registry, context.state, text(event)))),
      release: assign({ state: ({ context }) => releaseEscalation(context.state) }),
      hearRouter: assign(({ context, event }) => put(hearRouter(registry, view(context), text(event)))),
      enter: assign(({ context }, p: unknown) => put(enter(registry, view(context), branchOf(p)))),
      resume: assign(({ context }) => put(resume(registry, view(context)))),
      holdSticky: assign(({ context, event }) => put(holdSticky(view(context), decision(event)!))),
      holdWithHuman: assign(({ context, event }) => put(holdWithHuman(view(context), decision(event)))),
      handoffByRouter: assign(({ context }, p: unknown) => put(handoff(registry, view(context), branchOf(p), null))),
      handoffBySignal: assign(({ context, event }, p: unknown) => {
        const sig = tailOf(text(event)).intentChange;
        return put(handoff(registry, view(context), branchOf(p), sig.kind === "ok" ? sig.reason : null));
      }),
      loopGuard: assign(({ context }) => put(loopGuard(registry, view(context)))),
      takeSignal: assign(({ context, event }) => put(takeSignal(view(context), tailOf(text(event))))),
      callNext: assign(({ context }) => put(callNext(view(context)))),
      hearBranch: assign(({ context, event }) => put(hearBranch(registry, view(context), tailOf(text(event))))),
      keepStep: assign(({ context, event }) => put(keepStep(view(context), tailOf(text(event))))),
      softInsertion: assign(({ context }) => put(softInsertion(view(context)))),
      readPlainTail: assign(({ context, event }) => put(readPlainTail(view(context), tailOf(text(event))))),
      awaitStep: assign({ turn: ({ context }) => ({ ...context.turn!, stepPending: true }) }),
      proposeStep: raise(({ context, event }) => ({
        type: "step.propose" as const,
        ...proposalOf(context.state, tailOf(text(event as DialogueEvent))),
      })),
      composeReply: assign(({ context }) => put(composeReply(registry, view(context)))),
      storeFragments: assign({
        turn: ({ context, event }) => ({
          ...context.turn!,
          fragments: (event as { fragments: KnowledgeFragment[] }).fragments,
        }),
      }),
      emitRouter: emit(({ event }) => ({ type: "effect.router", text: text(event).text }) as const),
      emitRouted: emit(({ context }) => ({ type: "clinic.routed", intent: context.state.routerDecision }) as const),
      // A side question is looked up in the knowledge of the topic the router saw, not the booking's.
      emitRetrieve: emit(
        ({ context }) =>
          ({
            type: "effect.retrieve",
            branch: context.turn!.hint ?? context.state.activeBranch!,
            query: context.turn!.text,
          }) as const,
      ),
      countCall: assign({
        turn: ({ context }) => ({ ...context.turn!, branchCalls: context.turn!.branchCalls + 1, pendingCall: false }),
      }),
      emitBranchCall: emit(branchEffect),
      emitFinal: emit(({ context }): DialogueEmitted => ({
        type: "clinic.final",
        reply: context.turn!.reply ?? "",
        state: context.state,
        events: context.turn!.events,
        notes: context.turn!.notes,
        fragments: context.turn!.fragments,
        withHuman: context.human !== null,
      })),
      emitFailed: emit(
        ({ event }) =>
          ({
            type: "clinic.failed",
            role: (event as { role: "router" | "branch" }).role,
            message: (event as { message: string }).message,
          }) as const,
      ),
      clearTurn: assign({ turn: null }),
      // The human (issue 32).
      holdForHuman: assign(({ context, event }) => {
        const { reply, hold } = heldAnswer(context.human!, event as HeldMessage);
        return {
          human: hold,
          turn: { ...context.turn!, reply, events: [...context.turn!.events, "held_by_operator" as const] },
        };
      }),
      take: assign(({ event }) => {
        const e = event as Extract<HumanEvent, { type: "operator.take" }>;
        return { human: { operator: e.operator, since: e.at, replies: 0 }, assignee: e.operator };
      }),
      assign: assign({ assignee: ({ event }) => (event as Extract<HumanEvent, { type: "operator.assign" }>).assignee }),
      unassign: assign({ assignee: null }),
      // The colleague holds it from now: the first-reply clock starts again for them.
      transfer: assign(({ event }) => {
        const e = event as Extract<HumanEvent, { type: "operator.transfer" }>;
        return { human: { operator: e.to, since: e.at, replies: 0 }, assignee: e.to };
      }),
      leaveHuman: assign({ human: null }),
      operatorWrote: assign({
        human: ({ context, event }) => ({
          ...context.human!,
          replies: context.human!.replies + 1,
          lastOperatorAt: (event as Extract<HumanEvent, { type: "operator.message" }>).at,
        }),
      }),
      releaseToSuspended: assign({ state: ({ context }) => releaseToSuspended(registry, context.state) }),
    },
    guards: {
      ...stepGuards<DialogueContext>((p) => stepSpec(registry, (p.branch ?? null) as BranchCode | null, p.step), host),
      redFlag: ({ event }) => event.type === "patient.message" && hasRedFlag(event),
      // The router's answer (seed steps 1–4).
      routerUnclear: ({ event }) => decision(event) === null,
      routerStays: ({ context, event }) => decision(event) === context.state.activeBranch,
      routerDisagrees: ({ context, event }) =>
        decision(event) !== null && decision(event) !== context.state.activeBranch,
      routerNames: ({ event }, p: { branch: BranchCode }) => decision(event) === p.branch,
      routerResumes: ({ context, event }, p: { branch: BranchCode }) =>
        decision(event) === p.branch && context.state.suspended?.intent === p.branch,
      routerLoopTrips: ({ context, event }) =>
        decision(event) !== null && decision(event) !== context.state.activeBranch && loopGuardTrips(context.state),
      routerLoopLocked: ({ context, event }) =>
        decision(event) !== null && decision(event) !== context.state.activeBranch && loopLocked(context.state),
      // The branch's answer (seed step 6).
      signalPastCallLimit: ({ context, event }) =>
        leaves(context, event) !== null && context.turn!.branchCalls >= MAX_BRANCH_CALLS_PER_TURN,
      signalResumes: ({ context, event }, p: { branch: BranchCode }) =>
        leaves(context, event) === p.branch && context.state.suspended?.intent === p.branch,
      signalLoopTrips: ({ context, event }) => leaves(context, event) !== null && loopGuardTrips(context.state),
      signalNames: ({ context, event }, p: { branch: BranchCode }) => leaves(context, event) === p.branch,
      softInsertion: ({ context, event }) =>
        leaves(context, event) === null && isSoftInsertion(context.state, tailOf(text(event))),
      stepProposed: ({ context, event }) => leaves(context, event) === null && tailOf(text(event)).state.kind === "ok",
      branchStays: ({ context, event }) => leaves(context, event) === null,
      // The turn.
      turnStopped: ({ context }) => context.turn?.stop === true,
      needsKnowledge: ({ context }) => needsKnowledge(registry, view(context)),
      callPending: ({ context }) => context.turn?.pendingCall === true,
      stepSettled: ({ context }) => context.turn?.stepPending !== true,
      withHuman: ({ context }) => context.human !== null,
      assigned: ({ context }) => context.assignee !== null,
      transferToOther: ({ context, event }) =>
        event.type === "operator.transfer" && context.human !== null && event.to !== context.human.operator,
      legacyRelease: ({ event }) => event.type === "operator.release" && event.at === undefined,
      suspendedIs: ({ context }, p: { branch: BranchCode }) => suspendedIs(context.state, p.branch),
    },
  });

  const patient = patientRegion(registry, host);

  const created = machine.createMachine({
    id: MACHINE_ID,
    type: "parallel",
    // A thread starts unrouted; a stored thread's position comes from its snapshot (see guardRestore).
    context: () => ({ state: initialClinicState(), turn: null, human: null, assignee: null }),
    // The generated nodes are plain config; xstate validates them at creation.
    states: {
      patient: patient as { states: {} },
      turn: turnRegion as { states: {} },
      handler: handlerRegion as { states: {} },
    },
  });
  // The stored value's state nodes worked out once per value (issue 46); the clinic's checks wrap that.
  memoizeResolve(created);
  guardRestore(created, registry);
  return created;
}

export type ClinicDialogueMachine = ReturnType<typeof createClinicDialogueMachine>;
