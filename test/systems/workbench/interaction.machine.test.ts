import { describe, expect, it } from "vitest";
import { getShortestPaths } from "xstate/graph";
import { initialTransition, transition } from "xstate";
import { interactionMachine, type InteractionEvent } from "../../../systems/workbench/interaction.machine";
import type { Candidate, Plan } from "../../../systems/workbench/types";
import { transitionCoverage } from "../../utils/machine-coverage";

const input = {
  interactionId: "interaction-1",
  conversationId: "conv-1",
  rootText: "Покажи композицию «Расчёт скидки»",
};
const ws = { generation: "1", snapshotSha256: "abc" };
const plan = (v: number): Plan => ({
  planVersion: v,
  plannedBy: "deterministic",
  tasks: [
    {
      id: "task-1",
      intent: "inspect_entity",
      sourceMode: "domain",
      entityType: "Composition",
      mentions: ["Расчёт скидки"],
      dependsOn: [],
    },
  ],
});
const candidates: Candidate[] = [
  { candidateId: "c1", identity: "composition-discount", displayName: "Расчёт скидки", documentType: "Composition" },
  { candidateId: "c2", identity: "composition-discount-v1", displayName: "Расчёт скидки", documentType: "Composition" },
];
const target = { identity: "composition-discount", documentType: "Composition", displayName: "Расчёт скидки" };

type Snap = ReturnType<typeof interactionMachine.transition>;
const events = (s: Snap): InteractionEvent[] => {
  const v = s.context.planVersion;
  const q = s.context.openClarificationId ?? "q-none";
  return [
    { type: "prepare", workspace: ws },
    { type: "prepared.answer", plan: plan(v), targets: [target] },
    { type: "prepared.clarify", plan: plan(v), clarificationId: `q${v}`, targets: [] },
    { type: "prepared.plain", plan: plan(v), answer: "Пока не поддерживается.", targets: [] },
    { type: "answered", answer: "Ответ [[composition-discount]]", validationOk: true },
    { type: "failed", code: "model_unavailable", message: "нет модели" },
    {
      type: "reply.answer",
      clarificationId: q,
      basePlanVersion: v,
      updates: [{ taskId: "task-1", field: "resolvedEntity", candidateId: "c2" }],
      candidates,
    },
    // a stale answer (old plan version) and a forged candidate: guards must refuse both
    {
      type: "reply.answer",
      clarificationId: q,
      basePlanVersion: v - 1,
      updates: [{ taskId: "task-1", field: "resolvedEntity", candidateId: "c2" }],
      candidates,
    },
    {
      type: "reply.answer",
      clarificationId: q,
      basePlanVersion: v,
      updates: [{ taskId: "task-1", field: "resolvedEntity", candidateId: "c9" }],
      candidates,
    },
    { type: "reply.unclear", clarificationId: q, basePlanVersion: v },
    { type: "cancel" },
    { type: "supersede", by: "interaction-2" },
  ];
};
const emitted = (actions: unknown) =>
  (actions as Array<{ type: string; params?: { event: { type: string } } }>)
    .filter((a) => a.type === "xstate.emit")
    .map((a) => a.params!.event.type);
const serialize = (s: Snap) =>
  JSON.stringify([s.value, s.status, s.context.planVersion, s.context.openClarificationId]);

describe("interaction machine", () => {
  it("xstate/graph paths cover every transition", () => {
    const cov = transitionCoverage(interactionMachine, {
      input,
      events,
      serialize,
      stopWhen: (s) => s.context.planVersion > 3,
    });
    console.log(
      `interaction machine transition coverage: ${cov.covered}/${cov.defined} (${Math.round((100 * cov.covered) / cov.defined)}%) over ${cov.edges} graph edges`,
    );
    expect(cov.missing).toEqual([]);
    expect(cov.covered).toBe(cov.defined);
  });

  it("every state is reachable and every final state is final", () => {
    const paths = getShortestPaths(interactionMachine, {
      input,
      events,
      serializeState: serialize as never,
      stopWhen: (s: Snap) => s.context.planVersion > 3,
    } as never);
    const reached = new Set(paths.map((p) => String(p.state.value)));
    expect([...reached].sort()).toEqual([
      "answering",
      "awaiting_clarification",
      "cancelled",
      "completed",
      "failed",
      "preparing",
      "superseded",
    ]);
    for (const p of paths)
      if (["completed", "cancelled", "superseded", "failed"].includes(String(p.state.value)))
        expect(p.state.status).toBe("done");
  });

  it("a clarification answer is a scoped patch: version + 1, the choice pinned, the root text untouched", () => {
    let [s] = initialTransition(interactionMachine, input);
    [s] = transition(interactionMachine, s, { type: "prepare", workspace: ws });
    [s] = transition(interactionMachine, s, {
      type: "prepared.clarify",
      plan: plan(1),
      clarificationId: "q1",
      targets: [],
    });
    expect(s.value).toBe("awaiting_clarification");
    const [after, actions] = transition(interactionMachine, s, {
      type: "reply.answer",
      clarificationId: "q1",
      basePlanVersion: 1,
      updates: [{ taskId: "task-1", field: "resolvedEntity", candidateId: "c2" }],
      candidates,
    });
    expect(after.value).toBe("preparing");
    expect(after.context.planVersion).toBe(2);
    expect(after.context.plan!.tasks[0]!.selection).toMatchObject({
      identity: "composition-discount-v1",
      clarificationId: "q1",
    });
    expect(after.context.rootText).toBe(input.rootText);
    expect(after.context.openClarificationId).toBeNull();
    expect((actions as Array<{ type: string }>).filter((a) => a.type === "xstate.emit")).toEqual([]);
    // a second answer to the same (now closed) clarification changes nothing
    const [again] = transition(interactionMachine, after, {
      type: "reply.answer",
      clarificationId: "q1",
      basePlanVersion: 1,
      updates: [{ taskId: "task-1", field: "resolvedEntity", candidateId: "c1" }],
      candidates,
    });
    expect(again).toBe(after);
  });

  it("asks the driver for effects by emitting, never by doing I/O", () => {
    let [s] = initialTransition(interactionMachine, input);
    const [, a1] = transition(interactionMachine, s, { type: "prepare", workspace: ws });
    expect(emitted(a1)).toEqual(["effect.prepare"]);
    [s] = transition(interactionMachine, s, { type: "prepare", workspace: ws });
    const [, a2] = transition(interactionMachine, s, { type: "prepared.answer", plan: plan(1), targets: [] });
    expect(emitted(a2)).toEqual(["effect.answer"]);
  });

  it("a persisted snapshot restores to the same state and continues identically", () => {
    let [s] = initialTransition(interactionMachine, input);
    for (const e of [
      { type: "prepare", workspace: ws },
      { type: "prepared.clarify", plan: plan(1), clarificationId: "q1", targets: [] },
    ] as InteractionEvent[])
      [s] = transition(interactionMachine, s, e);
    const persisted = JSON.parse(JSON.stringify(interactionMachine.getPersistedSnapshot(s)));
    const restored = interactionMachine.resolveState(persisted);
    const ev: InteractionEvent = {
      type: "reply.answer",
      clarificationId: "q1",
      basePlanVersion: 1,
      updates: [{ taskId: "task-1", field: "resolvedEntity", candidateId: "c1" }],
      candidates,
    };
    expect(interactionMachine.getPersistedSnapshot(transition(interactionMachine, restored, ev)[0])).toEqual(
      interactionMachine.getPersistedSnapshot(transition(interactionMachine, s, ev)[0]),
    );
  });
});
