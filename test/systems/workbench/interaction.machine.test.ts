import { describe, expect, it } from "vitest";
import { getShortestPaths } from "xstate/graph";
import { initialTransition, transition } from "xstate";
import {
  interactionMachine,
  interactionSpec,
  MODEL_FAILURE,
  UNCLEAR_PREFIX,
  type AnswerRequest,
  type InteractionEvent,
  type ReplyReceived,
} from "../../../systems/workbench/interaction.machine";
import { replyRefusal } from "../../../systems/workbench/interaction-clarification.machine";
import { stateLabel } from "../../../systems/workbench/interaction-setup.machine";
import { discardedTurn } from "../../../systems/workbench/interaction-report";
import type { Candidate, Plan } from "../../../systems/workbench/types";
import { transitionCoverage } from "../../utils/machine-coverage";
import { discountTask } from "./fixtures";

const input = {
  interactionId: "interaction-1",
  conversationId: "conv-1",
  rootText: "Покажи композицию «Расчёт скидки»",
};
const ws = { generation: "1", snapshotSha256: "abc" };
const ws2 = { generation: "2", snapshotSha256: "def" };
const plan = (v: number): Plan => ({
  planVersion: v,
  plannedBy: "deterministic",
  tasks: [discountTask()],
});
const candidates: Candidate[] = [
  { candidateId: "c1", identity: "composition-discount", displayName: "Расчёт скидки", documentType: "Composition" },
  { candidateId: "c2", identity: "composition-discount-v1", displayName: "Расчёт скидки", documentType: "Composition" },
];
const target = { identity: "composition-discount", documentType: "Composition", displayName: "Расчёт скидки" };
const request: AnswerRequest = {
  messages: [{ role: "user", content: "…" }],
  modelRequest: {
    request: input.rootText,
    plan: { planVersion: 1, tasks: [] },
    context: [],
    conversation: [],
    workspace: { generation: "1", snapshotSha256: "abc" },
  },
  notice: null,
};
const question = { taskId: "task-1", slot: "entity", question: "Какую композицию вы имеете в виду?", candidates };

type Snap = ReturnType<typeof interactionMachine.transition>;
const reply = (s: Snap, over: Partial<ReplyReceived> = {}): ReplyReceived => ({
  type: "reply.received",
  clarificationId: s.context.openClarificationId ?? "q-none",
  taskId: "task-1",
  question: question.question,
  basePlanVersion: s.context.planVersion,
  text: "эту",
  selectedCandidateId: null,
  candidates,
  workspace: ws,
  ...over,
});
const pick = (id: string) => [{ taskId: "task-1", field: "resolvedEntity" as const, candidateId: id }];
const classified = (kind: string, updates = pick("c1")): InteractionEvent =>
  ({
    type: "reply.classified",
    kind,
    decidedBy: "classifier",
    candidateId: null,
    updates,
    calls: { classifier: 1 },
  }) as never;

const events = (s: Snap): InteractionEvent[] => {
  const v = s.context.planVersion;
  const q = s.context.openClarificationId ?? "q-none";
  return [
    { type: "prepare", workspace: ws, origin: "request" },
    { type: "prepared.answer", plan: plan(v), targets: [target], reasons: [], request, calls: { planner: 1 } },
    {
      type: "prepared.clarify",
      plan: plan(v),
      clarificationId: `q${v}`,
      targets: [],
      reasons: ["ambiguous"],
      question,
    },
    { type: "prepared.plain", plan: plan(v), answer: "Пока не поддерживается.", targets: [], reasons: ["unsupported"] },
    { type: "answered", answer: "Ответ [[composition-discount]]", validationOk: true, calls: { answer: 1 } },
    { type: "model.failed", role: "answer", code: "unavailable", calls: { answer: 1 } },
    // version 1's failure event, still taken so v1 logs replay
    { type: "failed", code: "model_unavailable", message: "нет модели" },
    // a click, a cancel by command, free text for the classifier
    reply(s, { selectedCandidateId: "c2" }),
    reply(s, { text: "Отмена" }),
    reply(s, { text: "та, про которую говорили вчера" }),
    // a stale answer, a forged candidate, another question: the guards refuse each
    reply(s, { selectedCandidateId: "c2", basePlanVersion: v - 1 }),
    reply(s, { selectedCandidateId: "c9" }),
    reply(s, { selectedCandidateId: "c2", clarificationId: "q-other" }),
    classified("answer"),
    classified("correction", []),
    classified("unclear"),
    classified("cancel"),
    classified("new_request"),
    // v1/v2's replies, classified before the turn: still taken so their logs replay
    { type: "reply.answer", clarificationId: q, basePlanVersion: v, updates: pick("c2"), candidates },
    { type: "reply.answer", clarificationId: q, basePlanVersion: v - 1, updates: pick("c2"), candidates },
    { type: "reply.unclear", clarificationId: q, basePlanVersion: v },
    { type: "cancel" },
    { type: "supersede", by: "interaction-2" },
  ];
};
const emitted = (actions: unknown) =>
  (actions as Array<{ type: string; params?: { event: { type: string } } }>)
    .filter((a) => a.type === "xstate.emit")
    .map((a) => a.params!.event);
const serialize = (s: Snap) =>
  JSON.stringify([
    s.value,
    s.status,
    s.context.planVersion,
    s.context.openClarificationId,
    s.context.replyInTurn,
    s.context.reply?.kind ?? null,
  ]);
const run = (events: InteractionEvent[], from?: Snap) => {
  let [s] = from ? [from] : initialTransition(interactionMachine, input);
  for (const e of events) [s] = transition(interactionMachine, s, e);
  return s;
};
/** Waiting on question q1 at plan version 1. */
const waiting = () =>
  run([
    { type: "prepare", workspace: ws, origin: "request" },
    { type: "prepared.clarify", plan: plan(1), clarificationId: "q1", targets: [], reasons: [], question },
  ]);

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
    const reached = new Set(paths.map((p) => stateLabel(p.state)));
    expect([...reached].sort()).toEqual([
      "answering",
      "awaiting_clarification.classifying",
      "awaiting_clarification.open",
      "awaiting_clarification.released",
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

  it("a clicked candidate is a scoped patch: version + 1, the choice pinned, the root text untouched", () => {
    const s = waiting();
    expect(s.value).toEqual({ awaiting_clarification: "open" });
    expect(s.context.question).toMatchObject({ id: "q1", slot: "entity", candidates });
    const [after, actions] = transition(interactionMachine, s, reply(s, { selectedCandidateId: "c2", workspace: ws2 }));
    expect(after.value).toBe("preparing");
    expect(after.context.planVersion).toBe(2);
    expect(after.context.plan!.tasks[0]!.selection).toMatchObject({
      identity: "composition-discount-v1",
      clarificationId: "q1",
    });
    expect(after.context.rootText).toBe(input.rootText);
    expect(after.context.openClarificationId).toBeNull();
    expect(after.context.reply).toMatchObject({ kind: "answer", decidedBy: "click", candidateId: "c2" });
    // The continuation is announced at the new version and prepared over the reply's (changed) workspace.
    expect(emitted(actions)).toEqual([
      { type: "effect.started", interactionId: "interaction-1", planVersion: 2, continuation: true },
      expect.objectContaining({
        type: "effect.prepare",
        planVersion: 2,
        workspaceChanged: true,
        previousSnapshotSha256: "abc",
        answered: { question: question.question, answer: "эту" },
      }),
    ]);
    expect(after.context.workspace).toEqual(ws2);
  });

  it("guards refuse a stale, foreign, repeated or forged answer, and say why (the route's 409/422)", () => {
    const s = waiting();
    const stale = reply(s, { selectedCandidateId: "c2", basePlanVersion: 0 });
    const foreign = reply(s, { selectedCandidateId: "c2", clarificationId: "q-other" });
    const forged = reply(s, { selectedCandidateId: "c9" });
    for (const e of [stale, foreign, forged]) expect(transition(interactionMachine, s, e)[0]).toBe(s);
    expect(replyRefusal(s, stale)).toMatchObject({ code: "conflict", details: { basePlanVersion: 0, planVersion: 1 } });
    expect(replyRefusal(s, foreign)).toMatchObject({ code: "conflict", details: { clarificationId: "q-other" } });
    expect(replyRefusal(s, forged)).toMatchObject({
      code: "unknown_candidate",
      details: { selectedCandidateId: "c9", allowed: ["c1", "c2"] },
    });
    expect(replyRefusal(s, reply(s, { selectedCandidateId: "c1" }))).toBeNull();
    // Answered once: the same answer again is refused, by the machine and by its reason.
    const answered = run([reply(s, { selectedCandidateId: "c1" })], s);
    const again = reply(s, { selectedCandidateId: "c1" });
    expect(transition(interactionMachine, answered, again)[0]).toBe(answered);
    expect(replyRefusal(answered, again)).toMatchObject({ code: "conflict" });
    const done = run(
      [
        { type: "prepared.answer", plan: plan(2), targets: [target], reasons: [], request },
        { type: "answered", answer: "Ответ", validationOk: true },
      ],
      answered,
    );
    expect(done.value).toBe("completed");
    expect(replyRefusal(done, again)).toMatchObject({ code: "conflict", details: { status: "completed" } });
  });

  it("free text is classified by an effect; its verdict decides patch, re-ask, cancel or a new request", () => {
    const s = waiting();
    const [c, actions] = transition(interactionMachine, s, reply(s, { text: "та, про которую говорили вчера" }));
    expect(c.value).toEqual({ awaiting_clarification: "classifying" });
    expect(emitted(actions)).toEqual([
      expect.objectContaining({
        type: "effect.classifyReply",
        askModel: true,
        task: expect.objectContaining({ id: "task-1", entityType: "Composition", mentions: expect.any(Array) }),
      }),
    ]);
    const patch = run([classified("correction")], c);
    expect(patch.value).toBe("preparing");
    expect(patch.context.planVersion).toBe(2);
    expect(patch.context.turn.calls.classifier).toBe(1);
    // An answer that names nothing usable is unclear: the question closes and is asked again, prefixed.
    const unclear = run([classified("answer", [])], c);
    expect(unclear.context.reply!.kind).toBe("unclear");
    expect(unclear.context.planVersion).toBe(1);
    const asked = run(
      [{ type: "prepared.clarify", plan: plan(1), clarificationId: "q2", targets: [], reasons: [], question }],
      unclear,
    );
    expect(asked.context.question!.question).toBe(UNCLEAR_PREFIX + question.question);
    expect(run([classified("cancel")], c).value).toBe("cancelled");
    const released = run([classified("new_request")], c);
    expect(released.value).toEqual({ awaiting_clarification: "released" });
    expect(discardedTurn(released)).toBe(true);
  });

  it("asks the driver for effects by emitting, never by doing I/O", () => {
    const [s0] = initialTransition(interactionMachine, input);
    const [s1, a1] = transition(interactionMachine, s0, { type: "prepare", workspace: ws, origin: "request" });
    expect(emitted(a1).map((e) => e.type)).toEqual(["effect.started", "effect.prepare"]);
    const [, a2] = transition(interactionMachine, s1, {
      type: "prepared.answer",
      plan: plan(1),
      targets: [],
      reasons: [],
      request,
    });
    expect(emitted(a2)).toEqual([{ type: "effect.answer", interactionId: "interaction-1", planVersion: 1, request }]);
  });

  it("a persisted snapshot restores to the same state and continues identically", () => {
    const s = waiting();
    const persisted = JSON.parse(JSON.stringify(interactionMachine.getPersistedSnapshot(s)));
    const restored = interactionMachine.resolveState(persisted);
    const ev = reply(s, { selectedCandidateId: "c1" });
    expect(interactionMachine.getPersistedSnapshot(transition(interactionMachine, restored, ev)[0])).toEqual(
      interactionMachine.getPersistedSnapshot(transition(interactionMachine, s, ev)[0]),
    );
  });

  it("a failed answer model ends a new request `failed`, with the message that it was kept", () => {
    const s = run([
      { type: "prepare", workspace: ws, origin: "request" },
      { type: "prepared.answer", plan: plan(1), targets: [target], reasons: [], request },
      { type: "model.failed", role: "answer", code: "timeout", calls: { answer: 1 } },
    ]);
    expect(s.value).toBe("failed");
    expect(s.status).toBe("done");
    expect(s.context.error).toEqual(MODEL_FAILURE.request);
    expect(s.context.replyInTurn).toBeNull();
    expect(s.context.request).toBeNull();
    expect(s.context.turn.calls.answer).toBe(1);
  });

  it("a failed answer model while a clarification answer is applied ends `reply_failed` (a turn to discard)", () => {
    const rested = waiting();
    const applied = run([reply(rested, { selectedCandidateId: "c2" })], rested);
    expect(applied.context.replyInTurn).toBe("q1");
    const s = run(
      [
        { type: "prepared.answer", plan: plan(2), targets: [target], reasons: [], request },
        { type: "model.failed", role: "answer", code: "unavailable" },
      ],
      applied,
    );
    expect(s.value).toBe("reply_failed");
    expect(s.context.error).toEqual(MODEL_FAILURE.reply);
    // The same reply answered: the turn rests and forgets it was applying one.
    const ok = run(
      [
        { type: "prepared.answer", plan: plan(2), targets: [target], reasons: [], request },
        { type: "answered", answer: "Ответ", validationOk: true },
      ],
      applied,
    );
    expect(ok.value).toBe("completed");
    expect(ok.context.replyInTurn).toBeNull();
  });

  it("v1 and v2 snapshots migrate to v3, and their logs replay through v3 to them", () => {
    // Events as version 2 logged them: every turn began with `prepare`, a reply was classified before it.
    const v2Log = [
      { type: "prepare", workspace: ws },
      { type: "prepared.clarify", plan: plan(1), clarificationId: "q1", targets: [] },
    ] as InteractionEvent[];
    const waitingV3 = run(v2Log);
    const replayed = JSON.parse(JSON.stringify(interactionMachine.getPersistedSnapshot(waitingV3)));
    // What v2 stored: a flat waiting state and no v3 fields.
    const { question: q, reply: r, request: rq, turn, ...v2Context } = replayed.context;
    expect([q, r, rq]).toEqual([null, null, null]);
    expect(turn.origin).toBeNull();
    const v2 = { ...replayed, value: "awaiting_clarification", context: v2Context };
    expect(interactionSpec.version).toBe(3);
    expect(interactionSpec.replaysFrom).toBe(1);
    expect(interactionSpec.migrate!(v2, 2)).toEqual(replayed);
    const { replyInTurn, ...v1Context } = v2Context;
    expect(replyInTurn).toBeNull();
    expect(interactionSpec.migrate!({ ...v2, context: v1Context }, 1)).toEqual(replayed);
    expect(() => interactionSpec.migrate!(v2, 0)).toThrow();
    // A migrated v2 snapshot takes a v3 reply.
    const restored = interactionMachine.resolveState(interactionSpec.migrate!(v2, 2) as never);
    expect(restored.value).toEqual({ awaiting_clarification: "open" });
    expect(transition(interactionMachine, restored, reply(restored, { selectedCandidateId: "c1" }))[0].value).toBe(
      "preparing",
    );
    // A v2 reply turn (reply.answer, then prepare) still replays.
    const v2Reply = run(
      [
        { type: "reply.answer", clarificationId: "q1", basePlanVersion: 1, updates: pick("c2"), candidates },
        { type: "prepare", workspace: ws },
        { type: "prepared.answer", plan: plan(2), targets: [target] },
        { type: "failed", code: "model_unavailable", message: "Модель ответа сейчас недоступна." },
      ],
      waitingV3,
    );
    expect(v2Reply.value).toBe("failed");
    expect(v2Reply.context.planVersion).toBe(2);
    expect(v2Reply.context.error).toEqual({ code: "model_unavailable", message: "Модель ответа сейчас недоступна." });
  });
});
