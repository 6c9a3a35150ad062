import { stepStates } from "./booking-steps.machine";
import type { StepHost } from "./booking-steps.machine";
import { HISTORY, MACHINE_ID } from "./dialogue-restore";
import { isStepped } from "./registry";
import { branchCodes } from "./types";
import type { BranchCode, Registry } from "./types";

/**
 * The clinic dialogue's three regions as plain statechart config, generated from the registry
 * (dialogue.machine.ts wires them to its actions and guards by name): `patient` — where the
 * patient is; `turn` — what the turn waits for; `handler` — who answers, the bot or a human.
 */

const P = `#${MACHINE_ID}.patient`;
const to = (b: BranchCode | "unrouted") => `${P}.${b}`;

export function patientRegion<C>(registry: Registry, host: StepHost<C>) {
  const stepped = branchCodes.filter((b) => isStepped(registry, b));
  const resumeBy = (guard: "routerResumes" | "signalResumes", actions: unknown[], except?: BranchCode) =>
    stepped
      .filter((s) => s !== except)
      .map((s) => ({ guard: { type: guard, params: { branch: s } }, target: `${to(s)}.${HISTORY}`, actions }));

  const endEscalation = [
    ...stepped.map((s) => ({
      guard: { type: "suspendedIs", params: { branch: s } },
      target: `${to(s)}.${HISTORY}`,
      actions: "releaseToSuspended",
    })),
    { target: to("unrouted"), actions: "release" },
  ];

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
          // Release and close end the escalation: a booking it suspended goes on at its step.
          // A release logged before issue 32 (no `at`) goes to `unrouted`, as then: old logs replay to their snapshots.
          "operator.release": [
            { guard: "legacyRelease", target: to("unrouted"), actions: "release" },
            ...endEscalation,
          ],
          "operator.close": endEscalation,
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
  return patient;
}

export const turnRegion = {
  initial: "idle",
  states: {
    idle: {
      on: {
        "patient.message": [
          { guard: "redFlag", actions: ["emitFinal", "clearTurn"] },
          // A human holds the thread: the bot is silent (no router, no branch), the holding reply.
          { guard: "withHuman", actions: ["holdForHuman", "emitFinal", "clearTurn"] },
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

/** Who answers the patient: the bot, or the operator who took the thread. */
export const handlerRegion = {
  initial: "bot",
  states: {
    bot: {
      on: {
        "operator.take": { target: "human", actions: "take" },
        // Closing a thread the bot answers is allowed (an escalation ends with it, in `patient`).
        "operator.close": { actions: ["leaveHuman", "unassign"] },
        // Who will take it (issue 43); a held thread changes hands by transfer instead.
        "operator.assign": { actions: "assign" },
        // Back to the bot: nobody's any more (the escalation, if any, ends in `patient`).
        "operator.release": { guard: "assigned", actions: "unassign" },
      },
    },
    human: {
      on: {
        // Accepted only here: a message into a thread nobody holds is refused (409).
        "operator.message": { actions: "operatorWrote" },
        // To a colleague, with no bot in between; handing it to its holder is no change (refused).
        "operator.transfer": { guard: "transferToOther", actions: "transfer" },
        "operator.release": { target: "bot", actions: ["leaveHuman", "unassign"] },
        "operator.close": { target: "bot", actions: ["leaveHuman", "unassign"] },
      },
    },
  },
};
