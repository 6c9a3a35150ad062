// The evidence workflow's dialogue (seed 002 §8) as a pure statechart: interpret → gate →
// plan → execute → assess (rules, always) → critic → answer, with ConversationState carried
// between turns. Model calls and MCP tools are effects the driver runs; their results come
// back as events, and every decision between them is a pure function of the artifacts.
// A model that fails (after its one repair retry) is the `model.failed` event, and the
// machine, not the handler, takes the honest way on: the rules' interpreter (its scope says
// MODEL_OUTPUT_INVALID or MODEL_REQUIRED), the built-in plan, the rules' coverage alone, the
// answer composed from evidence. Offline, each model step fails at once (code `offline`) and
// the same rule states run.
import type { MachineSpec } from "../../driver/machine-spec";
import { emptyConversationState } from "./artifacts";
import { evidenceSetup } from "./conversation-setup.machine";

// Its setup (guards, actions, the effects asked for) is conversation-setup.machine.ts; the pure
// steps those actions compute, conversation-work.machine.ts; what it holds and takes,
// conversation-types.ts.
export const evidenceMachine = evidenceSetup.createMachine({
  id: "evidence-conversation",
  initial: "idle",
  context: ({ input }) => ({ state: emptyConversationState(input.conversationId), turn: null, last: null }),
  states: {
    idle: {
      on: {
        "user.message": { target: "interpreting", actions: "startTurn" },
      },
    },
    interpreting: {
      entry: "requestInterpretation",
      on: {
        interpreted: { target: "gating", actions: "readQuestion" },
        "model.failed": [
          { guard: "outputInvalid", target: "interpretingByRules", actions: "interpreterInvalid" },
          { target: "interpretingByRules", actions: "interpreterUnavailable" },
        ],
      },
    },
    // The rules' interpreter, once the model failed (or there is none); a question it cannot read is unreadable.
    interpretingByRules: {
      entry: "requestRuleInterpretation",
      on: { interpreted: { target: "gating", actions: "readQuestion" } },
    },
    gating: {
      always: [
        { guard: "customerBalance", target: "planningByRules" },
        { guard: "proceeds", target: "planning" },
        { target: "assessing" },
      ],
    },
    planning: {
      entry: "requestPlan",
      on: {
        planned: { target: "executing", actions: "storePlan" },
        "model.failed": { target: "planningByRules" },
      },
    },
    // The built-in plan: for a customer's balance, or once the planner model failed (or there is none).
    planningByRules: {
      entry: "requestRulePlan",
      on: { planned: { target: "executing", actions: "storePlan" } },
    },
    executing: {
      entry: "requestExecution",
      on: { executed: { target: "assessing", actions: "storeEvidence" } },
    },
    // The rules of the Coverage Critic run on every turn, blocked ones included (§8.6).
    assessing: {
      entry: ["assess", "requestCritic"],
      on: {
        criticized: { target: "answering", actions: "composeDraft" },
        "model.failed": { target: "answering", actions: "composeDraftUncriticized" },
      },
    },
    answering: {
      entry: "requestAnswer",
      on: {
        answered: { target: "idle", actions: ["finishTurn", "recordTurn", "dropTurn"] },
        // Nothing of the model's is streamed before it is resolved, so a failed answer step showed nothing.
        "model.failed": { target: "showingDraft" },
      },
    },
    // The answer model gave nothing and showed nothing: the answer composed from evidence goes out instead.
    showingDraft: {
      entry: "showDraft",
      on: { "draft.shown": { target: "idle", actions: ["finishTurn", "recordTurn", "dropTurn"] } },
    },
  },
});

export const evidenceSpec: MachineSpec<typeof evidenceMachine> = {
  id: "evidence-conversation",
  version: 1,
  machine: evidenceMachine,
};
