import { assign, emit, raise, setup } from "xstate";
import type { AnyStateMachine } from "xstate";
import { stepGuards, stepStates } from "./booking-steps.machine";
import type { StepEvent, StepHost, StepOutcome } from "./booking-steps.machine";
import { buildBranchSystemPrompt } from "./prompt";
import type { KnowledgeFragment } from "./prompt";
import { isStepped, stepSpec } from "./registry";
import {
  callNext,
  composeReply,
  decisionOf,
  enter,
  handoff,
  hasRedFlag,
  hearBranch,
  hearRouter,
  holdSticky,
  holdWithHuman,
  isSoftInsertion,
  keepStep,
  loopGuard,
  loopGuardTrips,
  loopLocked,
  MAX_BRANCH_CALLS_PER_TURN,
  needsKnowledge,
  newTurn,
  proposalOf,
  readPlainTail,
  releaseEscalation,
  resume,
  safetyEscalation,
  settleStep,
  signalLeaves,
  softInsertion,
  tailOf,
  takeSignal,
  validStep,
} from "./turn-logic";
import type { TurnScratch, TurnView } from "./turn-logic";
import { branchCodes, initialClinicState } from "./types";
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
 * Between turns the snapshot reads e.g. `{patient: {new_booking: "qualify"}, turn: "idle"}`.
 */

export interface DialogueContext {
  /** CONTRACT §5.3 thread state; `patient`'s state value mirrors its branch and step. */
  state: ClinicState;
  /** Scratch of the turn in progress; null between turns, so a snapshot holds control state only. */
  turn: TurnScratch | null;
}

export type DialogueEvent =
  | { type: "patient.message"; text: string }
  | { type: "router.result"; text: string }
  | { type: "retrieve.result"; fragments: KnowledgeFragment[] }
  | { type: "branch.result"; text: string }
  /** The router or the branch model could not be reached (after the client's retry). */
  | { type: "model.failed"; role: "router" | "branch"; message: string }
  /** An operator takes an escalated thread back (POST /v1/clinic/threads/{id}/release). */
  | { type: "operator.release" }
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
    }
  | { type: "clinic.failed"; role: "router" | "branch"; message: string };

/** 2: the statechart of seed 003 (issue 15); 1 was six I/O phases around an if/else ladder. */
export const CLINIC_DIALOGUE_VERSION = 2;

export interface DialogueOptions {
  /** CLINIC_ROUTER_HINT: a stepped branch holding the dialogue gets the [ПОДСКАЗКА РОУТЕРА] block. */
  routerHint?: boolean;
}

const MACHINE_ID = "clinicDialogue";
const P = `#${MACHINE_ID}.patient`;
/** The history state of a stepped branch; upper case, so no configured (lower_snake_case) step can be named so. */
const HISTORY = "H";

type Ctx = { context: DialogueContext; event: DialogueEvent };
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
  const stepped = branchCodes.filter((b) => isStepped(registry, b));
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
    },
  });

  const to = (b: BranchCode | "unrouted") => `${P}.${b}`;
  const resumeBy = (guard: "routerResumes" | "signalResumes", actions: unknown[], except?: BranchCode) =>
    stepped
      .filter((s) => s !== except)
      .map((s) => ({ guard: { type: guard, params: { branch: s } }, target: `${to(s)}.${HISTORY}`, actions }));

  const branchState = (b: BranchCode) => {
    const graph = registry.stepGraphs[b];
    if (b === "escalate_human" && !graph) {
      return {
        on: {
          "router.result": [
            // After routing_loop any switch gets the template again; any other escalation holds until released.
            { guard: "routerLoopLocked", actions: ["hearRouter", "loopGuard"] },
            { guard: "routerDisagrees", actions: ["hearRouter", "holdWithHuman"] },
          ],
          "operator.release": { target: to("unrouted"), actions: "release" },
        },
      };
    }
    if (!graph) return {};
    return {
      initial: graph.initial ?? graph.steps[0]!.code,
      states: { ...stepStates(graph, host, { branch: b }), [HISTORY]: { type: "history" } },
      on: {
        "router.result": [
          ...resumeBy("routerResumes", ["hearRouter", "resume"], b),
          // Sticky: the stepped branch keeps the dialogue; the router's decision becomes the hint.
          { guard: "routerDisagrees", actions: ["hearRouter", "holdSticky"] },
        ],
        "branch.result": [
          { guard: "softInsertion", actions: ["hearBranch", "softInsertion"] },
          { guard: "stepProposed", actions: ["hearBranch", "awaitStep", "proposeStep"] },
          { guard: "branchStays", actions: ["hearBranch", "keepStep"] },
        ],
      },
    };
  };

  const patient = {
    initial: "unrouted",
    on: {
      // Patient safety first: an acute red flag gets the emergency reply and a human, before the router.
      "patient.message": [
        { guard: "redFlag", target: to("escalate_human"), actions: "safety" },
        { actions: "startTurn" },
      ],
      "router.result": [
        { guard: "routerUnclear", actions: "hearRouter" },
        { guard: "routerStays", actions: "hearRouter" },
        ...resumeBy("routerResumes", ["hearRouter", "resume"]),
        { guard: "routerLoopTrips", target: to("escalate_human"), actions: ["hearRouter", "loopGuard"] },
        ...branchCodes.map((b) => ({
          guard: { type: "routerNames", params: { branch: b } },
          target: to(b),
          actions: ["hearRouter", { type: "handoffByRouter", params: { branch: b } }],
        })),
      ],
      "branch.result": [
        { guard: "signalPastCallLimit", target: to("escalate_human"), actions: ["takeSignal", "loopGuard"] },
        ...resumeBy("signalResumes", ["takeSignal", "resume", "callNext"]),
        { guard: "signalLoopTrips", target: to("escalate_human"), actions: ["takeSignal", "loopGuard"] },
        ...branchCodes.map((b) => ({
          guard: { type: "signalNames", params: { branch: b } },
          target: to(b),
          actions: ["takeSignal", { type: "handoffBySignal", params: { branch: b } }, "callNext"],
        })),
        { actions: ["hearBranch", "readPlainTail"] },
      ],
    },
    states: {
      // A new thread, or one an operator released: the router's first answer enters a branch (not a counted switch).
      unrouted: {
        on: {
          "router.result": [
            {
              guard: "routerUnclear",
              target: to("general_info"),
              actions: ["hearRouter", { type: "enter", params: { branch: "general_info" } }],
            },
            ...resumeBy("routerResumes", ["hearRouter", "resume"]),
            ...branchCodes.map((b) => ({
              guard: { type: "routerNames", params: { branch: b } },
              target: to(b),
              actions: ["hearRouter", { type: "enter", params: { branch: b } }],
            })),
          ],
        },
      },
      ...Object.fromEntries(branchCodes.map((b) => [b, branchState(b)])),
    },
  };

  const turn = {
    initial: "idle",
    states: {
      idle: {
        on: {
          "patient.message": [
            { guard: "redFlag", actions: ["emitFinal", "clearTurn"] },
            { target: "routing", actions: "emitRouter" },
          ],
        },
      },
      routing: {
        on: {
          "router.result": { target: "dispatch", actions: "emitRouted" },
          "model.failed": { target: "failed", actions: "emitFailed" },
        },
      },
      // Transient: the loop guard ends the turn with its template (no model call); otherwise call the branch.
      dispatch: {
        always: [
          { guard: "turnStopped", target: "idle", actions: ["emitFinal", "clearTurn"] },
          { guard: "needsKnowledge", target: "retrieving", actions: "emitRetrieve" },
          { target: "calling", actions: ["countCall", "emitBranchCall"] },
        ],
      },
      retrieving: {
        on: { "retrieve.result": { target: "calling", actions: ["storeFragments", "countCall", "emitBranchCall"] } },
      },
      calling: {
        on: { "branch.result": { target: "afterBranch" }, "model.failed": { target: "failed", actions: "emitFailed" } },
      },
      // Waits for the step graph's verdict (a raised event) before the reply is composed.
      afterBranch: {
        always: [
          { guard: "callPending", target: "dispatch" },
          { guard: "stepSettled", target: "idle", actions: ["composeReply", "emitFinal", "clearTurn"] },
        ],
      },
      // The turn is void: the driver writes nothing of it, so no snapshot rests here.
      failed: {},
    },
  };

  const created = machine.createMachine({
    id: MACHINE_ID,
    type: "parallel",
    // A thread starts unrouted; a stored thread's position comes from its snapshot (see guardRestore).
    context: () => ({ state: initialClinicState(), turn: null }),
    // The generated nodes are plain config; xstate validates them at creation.
    states: { patient: patient as { states: {} }, turn: turn as { states: {} } },
  });
  guardRestore(created, registry);
  return created;
}

export type ClinicDialogueMachine = ReturnType<typeof createClinicDialogueMachine>;

/** The `patient` region's value for a thread state: the branch, and the step of a stepped branch. */
export function patientValue(state: ClinicState): string | Record<string, string> {
  if (state.activeBranch === null) return "unrouted";
  return state.step === null ? state.activeBranch : { [state.activeBranch]: state.step };
}

interface Persisted {
  value?: unknown;
  context?: { state?: ClinicState; turn?: unknown };
  historyValue?: Record<string, { id: string }[]>;
  [k: string]: unknown;
}

/**
 * Every restore (the driver's, replay's across settings versions) goes through `resolveState`;
 * the machine is generated from settings that may have changed since the snapshot was written,
 * so the position is read from the thread state (a step gone from the graph falls back to the
 * initial one, as the router stage did in v1) and history entries naming gone states are dropped.
 * xstate's `resolveState` takes history as stored ids; it is revived to state nodes here.
 */
function guardRestore(machine: AnyStateMachine, registry: Registry): void {
  const resolve = machine.resolveState.bind(machine);
  const node = (id: string) => {
    try {
      return machine.getStateNodeById(id);
    } catch {
      return null;
    }
  };
  machine.resolveState = ((config: Persisted) => {
    const state = config.context?.state;
    if (!state) return resolve(config as never);
    const fixed: ClinicState = {
      ...state,
      step: state.activeBranch === null ? state.step : validStep(registry, state.activeBranch, state.step),
    };
    const turnValue = (config.value as { turn?: unknown } | undefined)?.turn;
    const historyValue = Object.fromEntries(
      Object.entries(config.historyValue ?? {})
        .map(([id, list]) => [id, node(id) ? list.map((n) => node(typeof n === "string" ? n : n.id)) : []] as const)
        .filter(([, list]) => list.length > 0 && list.every(Boolean)),
    );
    return resolve({
      ...config,
      value: { patient: patientValue(fixed), turn: typeof turnValue === "string" ? turnValue : "idle" },
      context: { ...config.context, state: fixed },
      historyValue,
    } as never);
  }) as typeof machine.resolveState;
}

/**
 * v1 → v2: a v1 snapshot rests in `idle` with the thread state in context; v2 reads the branch and
 * step from it, and a suspended stepped scenario becomes its branch's history (where a resume goes).
 */
export function migrateClinicDialogue(persisted: unknown, fromVersion: number): unknown {
  if (fromVersion !== 1) throw new Error(`clinic-dialogue: no migration from version ${fromVersion}`);
  const p = persisted as Persisted;
  const state = p.context?.state ?? initialClinicState();
  const s = state.suspended;
  const historyValue =
    s && s.step !== null
      ? { [`${MACHINE_ID}.patient.${s.intent}.${HISTORY}`]: [{ id: `${MACHINE_ID}.patient.${s.intent}.${s.step}` }] }
      : {};
  return { ...p, value: { patient: patientValue(state), turn: "idle" }, context: { state, turn: null }, historyValue };
}
