import { assign, emit, setup } from "xstate";
import { proposeStep } from "./booking-steps.machine";
import { buildBranchSystemPrompt } from "./prompt";
import type { KnowledgeFragment } from "./prompt";
import { applyBranchOutput, applyRouterDecision, applySafetyEscalation, hasRedFlag, needsKnowledge, newTurn, releaseEscalation } from "./turn-logic";
import type { TurnScratch, TurnView } from "./turn-logic";
import { initialClinicState } from "./types";
import type { BranchCode, ClinicState, Registry, TurnEvent } from "./types";

/**
 * The clinic thread as a statechart (seed 003): router → resume / sticky / handoff / loop guard →
 * (knowledge) → branch → tail → validator and guards. Model calls and retrieval are requested with
 * `effect.*` emits and answered by the driver with events; the machine itself never does I/O.
 */

export interface DialogueContext {
  state: ClinicState;
  /** Scratch of the turn in progress; null between turns, so a snapshot holds control state only. */
  turn: TurnScratch | null;
}

export type DialogueEvent =
  | { type: "patient.message"; text: string }
  | { type: "router.result"; text: string }
  | { type: "retrieve.result"; fragments: KnowledgeFragment[] }
  | { type: "branch.result"; text: string }
  /** An operator takes an escalated thread back (POST /v1/clinic/threads/{id}/release). */
  | { type: "operator.release" };

export type DialogueEmitted =
  | { type: "effect.router"; text: string }
  | { type: "effect.retrieve"; branch: BranchCode; query: string }
  | { type: "effect.branch"; branch: BranchCode; system: string; text: string; call: number; hint: BranchCode | null }
  | { type: "clinic.final"; reply: string; state: ClinicState; events: TurnEvent[]; notes: string[]; fragments: KnowledgeFragment[] };

export const CLINIC_DIALOGUE_VERSION = 1;

const view = (c: DialogueContext): TurnView => ({ state: c.state, turn: c.turn! });

export function createClinicDialogueMachine(registry: Registry) {
  const branchEffect = ({ context }: { context: DialogueContext }): DialogueEmitted => ({
    type: "effect.branch",
    branch: context.state.activeBranch!,
    system: buildBranchSystemPrompt({ registry, state: context.state, hint: context.turn!.hint, fragments: context.turn!.fragments }),
    text: context.turn!.text,
    call: context.turn!.branchCalls + 1,
    hint: context.turn!.hint,
  });
  return setup({
    types: {} as { context: DialogueContext; events: DialogueEvent; emitted: DialogueEmitted; input: { state?: ClinicState } | undefined },
    actions: {
      emitBranchCall: emit(branchEffect),
      emitFinal: emit(({ context }): DialogueEmitted => ({
        type: "clinic.final",
        reply: context.turn!.reply ?? "",
        state: context.state,
        events: context.turn!.events,
        notes: context.turn!.notes,
        fragments: context.turn!.fragments,
      })),
      clearTurn: assign({ turn: null }),
    },
    guards: {
      turnStopped: ({ context }) => context.turn?.stop === true,
      callPending: ({ context }) => context.turn?.pendingCall === true,
      needsKnowledge: ({ context }) => needsKnowledge(registry, view(context)),
      redFlag: ({ event }) => event.type === "patient.message" && hasRedFlag(event.text),
    },
  }).createMachine({
    id: "clinicDialogue",
    context: ({ input }) => ({ state: input?.state ?? initialClinicState(), turn: null }),
    initial: "idle",
    states: {
      idle: {
        on: {
          "patient.message": [
            // Patient safety first: an acute red flag gets the emergency reply and a human, before the router.
            {
              guard: "redFlag",
              target: "idle",
              actions: [
                assign(({ context, event }) => applySafetyEscalation(registry, { state: context.state, turn: newTurn(event.text) })),
                "emitFinal",
                "clearTurn",
              ],
            },
            {
              target: "routing",
              actions: [assign({ turn: ({ event }) => newTurn(event.text) }), emit(({ event }) => ({ type: "effect.router", text: event.text }) as const)],
            },
          ],
          "operator.release": { actions: assign({ state: ({ context }) => releaseEscalation(context.state) }) },
        },
      },
      routing: {
        on: {
          "router.result": {
            target: "dispatch",
            actions: assign(({ context, event }) => applyRouterDecision(registry, view(context), event.text)),
          },
        },
      },
      // Transient: the loop guard ends the turn with its template (no model call); otherwise call the branch.
      dispatch: {
        always: [
          { guard: "turnStopped", target: "idle", actions: ["emitFinal", "clearTurn"] },
          {
            guard: "needsKnowledge",
            target: "retrieving",
            // A side question is looked up in the knowledge of the topic the router saw, not the booking's.
            actions: emit(({ context }) => ({ type: "effect.retrieve", branch: context.turn!.hint ?? context.state.activeBranch!, query: context.turn!.text }) as const),
          },
          { target: "calling", actions: "emitBranchCall" },
        ],
      },
      retrieving: {
        on: {
          "retrieve.result": {
            target: "calling",
            actions: [assign({ turn: ({ context, event }) => ({ ...context.turn!, fragments: event.fragments }) }), "emitBranchCall"],
          },
        },
      },
      calling: {
        on: {
          "branch.result": {
            target: "afterBranch",
            actions: assign(({ context, event }) => applyBranchOutput(registry, view(context), event.text, proposeStep)),
          },
        },
      },
      afterBranch: {
        always: [{ guard: "callPending", target: "dispatch" }, { target: "idle", actions: ["emitFinal", "clearTurn"] }],
      },
    },
  });
}

export type ClinicDialogueMachine = ReturnType<typeof createClinicDialogueMachine>;
