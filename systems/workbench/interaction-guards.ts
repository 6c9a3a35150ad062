import { applyPatch, type PlanUpdate } from "./patch";
import { classifyReplyByCode } from "./reply";
import {
  type CallCounter,
  type InteractionContext,
  type InteractionEvent,
  type ReplyFacts,
  type ReplyReceived,
  type ReplyRefusal,
} from "./interaction-types";

/**
 * The pure helpers the interaction machine's guards and actions call (interaction.machine.ts):
 * whether a clarification answer applies, what it patches, what a classified reply amounts to.
 * A route asks `replyRefusal` (the very check the guards make) to answer 409/422 before the stream.
 */

export type Snap = { value: unknown; context: InteractionContext };

/**
 * A transition only older logs take (their events are never sent now): replay needs it, the
 * eval's coverage of live traffic leaves it out (the machine tests walk it all the same).
 */
export const REPLAY_ONLY = { replayOnly: true } as const;

/** The top-level state: the projection's `status`, the run's outcome. */
export const statusOf = (s: { value?: unknown }): string =>
  typeof s.value === "object" && s.value !== null ? Object.keys(s.value)[0]! : String(s.value);

/** The state with its child (`awaiting_clarification.open`), for captions. */
export const stateLabel = (s: { value?: unknown }): string =>
  typeof s.value === "object" && s.value !== null
    ? Object.entries(s.value)
        .map(([k, v]) => `${k}.${String(v)}`)
        .join(", ")
    : String(s.value);

/**
 * Whether a clarification answer applies to this snapshot, and if not why: a candidate outside
 * the question's list (422), a question already closed or belonging to another turn of the
 * Interaction, an Interaction no longer waiting, a plan version that moved on (409).
 */
export function replyRefusal(s: Snap, e: ReplyReceived): ReplyRefusal | null {
  const c = s.context;
  if (e.selectedCandidateId !== null && !e.candidates.some((x) => x.candidateId === e.selectedCandidateId))
    return {
      code: "unknown_candidate",
      message: "Можно выбрать только один из предложенных вариантов.",
      details: { selectedCandidateId: e.selectedCandidateId, allowed: e.candidates.map((x) => x.candidateId) },
    };
  if (e.clarificationId !== c.openClarificationId)
    return {
      code: "conflict",
      message: "На это уточнение уже ответили (или оно закрыто).",
      details: { clarificationId: e.clarificationId, status: statusOf(s) },
    };
  if (JSON.stringify(s.value) !== JSON.stringify({ awaiting_clarification: "open" }))
    return { code: "conflict", message: "Запрос уже не ждёт уточнения.", details: { status: statusOf(s) } };
  if (e.basePlanVersion !== c.planVersion)
    return {
      code: "conflict",
      message: "План запроса уже изменился; обновите состояние.",
      details: { basePlanVersion: e.basePlanVersion, planVersion: c.planVersion },
    };
  return null;
}

export const byCode = (e: ReplyReceived) =>
  classifyReplyByCode(e.text, e.candidates, e.selectedCandidateId ?? undefined);

/** The scoped patch a reply asks for, applied to the context's plan (null: it does not apply). */
export function patched(
  c: InteractionContext,
  clarificationId: string,
  updates: PlanUpdate[],
  candidates: ReplyFacts["candidates"],
) {
  if (!c.plan || updates.length === 0) return null;
  const r = applyPatch(
    c.plan,
    { interactionId: c.interactionId, basePlanVersion: c.planVersion, clarificationId, updates },
    candidates,
  );
  return r.ok ? r : null;
}

/** The reply of this turn as `reply.received` brought it, before classification. */
const receivedFacts = (e: ReplyReceived): ReplyFacts => ({
  clarificationId: e.clarificationId,
  taskId: e.taskId,
  question: e.question,
  text: e.text,
  selectedCandidateId: e.selectedCandidateId,
  candidates: e.candidates,
  basePlanVersion: e.basePlanVersion,
  workspace: e.workspace,
  kind: null,
  decidedBy: null,
  candidateId: null,
  updates: [],
  classifierOutput: undefined,
});

/** A code decision as the classified reply it stands for. */
export function codeFacts(e: ReplyReceived): ReplyFacts {
  const d = byCode(e);
  const facts = receivedFacts(e);
  if (d.kind === "cancel") return { ...facts, kind: "cancel", decidedBy: "command" };
  if (d.kind !== "answer") return facts;
  const updates: PlanUpdate[] = [{ taskId: e.taskId, field: "resolvedEntity", candidateId: d.candidateId }];
  return { ...facts, kind: "answer", decidedBy: d.by, candidateId: d.candidateId, updates };
}

/** What a classified reply amounts to: an answer that patches the plan, or the other kinds as they are. */
export function classifiedKind(c: InteractionContext, e: InteractionEvent) {
  if (e.type !== "reply.classified" || !c.reply) return null;
  if (e.kind === "cancel" || e.kind === "new_request") return e.kind;
  if (e.kind === "unclear") return "unclear";
  return patched(c, c.reply.clarificationId, e.updates, c.reply.candidates) ? "patch" : "unclear";
}

export const addCalls = (c: CallCounter, more: Partial<CallCounter> | undefined): CallCounter => ({
  planner: c.planner + (more?.planner ?? 0),
  reranker: c.reranker + (more?.reranker ?? 0),
  classifier: c.classifier + (more?.classifier ?? 0),
  answer: c.answer + (more?.answer ?? 0),
});

/** The workspace this turn prepares over: the request's, or the reply's (null: the event brings none). */
export const nextWorkspace = (c: InteractionContext, e: InteractionEvent) =>
  e.type === "prepare"
    ? e.workspace
    : e.type === "reply.classified" || e.type === "reply.received"
      ? (c.reply?.workspace ?? null)
      : null;

/** A reply the open question takes (the guards below add what the code cascade made of it). */
export const admissible = (context: InteractionContext, event: InteractionEvent): event is ReplyReceived =>
  event.type === "reply.received" &&
  replyRefusal({ value: { awaiting_clarification: "open" }, context }, event) === null;
