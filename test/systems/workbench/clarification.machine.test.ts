import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import { clarificationMachine, type ClarificationEvent } from "../../../systems/workbench/clarification.machine";
import { transitionCoverage } from "../../utils/machine-coverage";

const input = {
  id: "clarification-1",
  interactionId: "interaction-1",
  taskId: "task-1",
  slot: "entity",
  question: "Какую композицию вы имеете в виду?",
  planVersion: 1,
  candidates: [
    { candidateId: "c1", identity: "a", displayName: "А", documentType: "Composition" },
    { candidateId: "c2", identity: "b", displayName: "Б", documentType: "Composition" },
  ],
};
type Snap = ReturnType<typeof clarificationMachine.transition>;
const events = (): ClarificationEvent[] => [
  { type: "answer", messageId: "m1", candidateId: "c2", kind: "answer" },
  { type: "answer", messageId: "m1", candidateId: "forged", kind: "answer" },
  { type: "answer", messageId: "m1", candidateId: null, kind: "correction" },
  { type: "unclear", messageId: "m1" },
  { type: "cancel", messageId: "m1" },
  { type: "supersede" },
];

describe("clarification machine", () => {
  it("xstate/graph paths cover every transition", () => {
    const cov = transitionCoverage(clarificationMachine, {
      input,
      events,
      serialize: (s: Snap) => JSON.stringify([s.value, s.context.selectedCandidateId, s.context.replyKind]),
    });
    console.log(
      `clarification machine transition coverage: ${cov.covered}/${cov.defined} (${Math.round((100 * cov.covered) / cov.defined)}%) over ${cov.edges} graph edges`,
    );
    expect(cov.missing).toEqual([]);
  });
  it("accepts only a candidate from its snapshot", () => {
    const [s] = initialTransition(clarificationMachine, input);
    const [forged] = transition(clarificationMachine, s, {
      type: "answer",
      messageId: "m",
      candidateId: "composition-alpha",
      kind: "answer",
    });
    expect(forged.value).toBe("open");
    const [ok] = transition(clarificationMachine, s, {
      type: "answer",
      messageId: "m",
      candidateId: "c1",
      kind: "answer",
    });
    expect(ok.value).toBe("answered");
    expect(ok.context).toMatchObject({ answerMessageId: "m", selectedCandidateId: "c1" });
    // a closed question takes no second answer
    expect(
      transition(clarificationMachine, ok, { type: "answer", messageId: "m2", candidateId: "c2", kind: "answer" })[0],
    ).toBe(ok);
  });
});
