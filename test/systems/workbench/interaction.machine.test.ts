import { describe, expect, it } from "vitest";
import { getShortestPaths } from "xstate/graph";
import { initialTransition, transition } from "xstate";
import {
  interactionMachine,
  interactionSpec,
  MODEL_FAILURE,
  type InteractionEvent,
} from "../../../systems/workbench/interaction.machine";
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
    { type: "model.failed", role: "answer", code: "unavailable" },
    // version 1's failure event, still taken so v1 logs replay
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
  JSON.stringify([s.value, s.status, s.context.planVersion, s.context.openClarificationId, s.context.replyInTurn]);

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
      "reply_failed",
      "superseded",
    ]);
    for (const p of paths)
      if (["completed", "cancelled", "superseded", "failed", "reply_failed"].includes(String(p.state.value)))
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

  it("a failed answer model ends a new request `failed`, with the message that it was kept", () => {
    let [s] = initialTransition(interactionMachine, input);
    [s] = transition(interactionMachine, s, { type: "prepare", workspace: ws });
    [s] = transition(interactionMachine, s, { type: "prepared.answer", plan: plan(1), targets: [target] });
    expect(s.value).toBe("answering");
    [s] = transition(interactionMachine, s, { type: "model.failed", role: "answer", code: "timeout" });
    expect(s.value).toBe("failed");
    expect(s.status).toBe("done");
    expect(s.context.error).toEqual(MODEL_FAILURE.request);
    expect(s.context.replyInTurn).toBeNull();
  });

  it("a failed answer model while a clarification answer is applied ends `reply_failed` (a turn to discard)", () => {
    let [s] = initialTransition(interactionMachine, input);
    [s] = transition(interactionMachine, s, { type: "prepare", workspace: ws });
    [s] = transition(interactionMachine, s, {
      type: "prepared.clarify",
      plan: plan(1),
      clarificationId: "q1",
      targets: [],
    });
    expect(s.context.replyInTurn).toBeNull();
    const rested = s;
    for (const reply of [
      {
        type: "reply.answer",
        clarificationId: "q1",
        basePlanVersion: 1,
        updates: [{ taskId: "task-1", field: "resolvedEntity", candidateId: "c2" }],
        candidates,
      },
      { type: "reply.unclear", clarificationId: "q1", basePlanVersion: 1 },
    ] as InteractionEvent[]) {
      [s] = transition(interactionMachine, rested, reply);
      expect(s.context.replyInTurn).toBe("q1");
      [s] = transition(interactionMachine, s, { type: "prepare", workspace: ws });
      [s] = transition(interactionMachine, s, { type: "prepared.answer", plan: plan(2), targets: [target] });
      [s] = transition(interactionMachine, s, { type: "model.failed", role: "answer", code: "unavailable" });
      expect(s.value).toBe("reply_failed");
      expect(s.context.error).toEqual(MODEL_FAILURE.reply);
    }
    // The same reply answered: the turn rests and forgets it was applying one.
    [s] = transition(interactionMachine, rested, {
      type: "reply.unclear",
      clarificationId: "q1",
      basePlanVersion: 1,
    });
    [s] = transition(interactionMachine, s, { type: "prepare", workspace: ws });
    [s] = transition(interactionMachine, s, { type: "prepared.answer", plan: plan(1), targets: [target] });
    [s] = transition(interactionMachine, s, { type: "answered", answer: "Ответ", validationOk: true });
    expect(s.value).toBe("completed");
    expect(s.context.replyInTurn).toBeNull();
  });

  it("a v1 snapshot migrates to v2 and a v1 log replays through v2 to it", () => {
    // Events as version 1 logged them (its handler chose the failure message).
    const v1Log = [
      { type: "prepare", workspace: ws },
      { type: "prepared.answer", plan: plan(1), targets: [target] },
      { type: "failed", code: "model_unavailable", message: "Модель ответа сейчас недоступна." },
    ] as InteractionEvent[];
    let [s] = initialTransition(interactionMachine, input);
    for (const e of v1Log) [s] = transition(interactionMachine, s, e);
    const replayed = JSON.parse(JSON.stringify(interactionMachine.getPersistedSnapshot(s)));
    // What v1 stored: the same snapshot without the field it never had.
    const { replyInTurn, ...v1Context } = replayed.context;
    expect(replyInTurn).toBeNull();
    const v1 = { ...replayed, context: v1Context };
    expect(interactionSpec.version).toBe(2);
    expect(interactionSpec.replaysFrom).toBe(1);
    expect(interactionSpec.migrate!(v1, 1)).toEqual(replayed);
    expect(() => interactionSpec.migrate!(v1, 0)).toThrow();
    const restored = interactionMachine.resolveState(interactionSpec.migrate!(v1, 1) as never);
    expect(restored.value).toBe("failed");
    expect(restored.context.error).toEqual({ code: "model_unavailable", message: "Модель ответа сейчас недоступна." });
  });
});
