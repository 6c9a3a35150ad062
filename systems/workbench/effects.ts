import { randomUUID } from "node:crypto";
import type { ZodType } from "zod";
import { AppError } from "../../driver/errors";
import type { Run } from "../../driver/run";
import { stageEnabled } from "../../driver/stage-switches";
import type { EffectHandlers } from "../../driver/drive";
import { ValidatedStream } from "../../driver/validated-stream";
import type { Deps } from "../../http/deps";
import type { Role } from "../../llm/client";
import type { Tx } from "../../storage/db";
import { listMessages } from "../../storage/messages";
import { gatedValidation, issueText, replacementAnswer, workbenchAnswerChecker } from "./answer-checker";
import { contextNumbers } from "./answer-numbers";
import type { WorkbenchEvents } from "./contract";
import type { InteractionEmitted, InteractionEvent, interactionMachine, ReplyFacts } from "./interaction.machine";
import type { ConversationMessage } from "./model-request";
import { passedIdentities, referencedIdentities } from "./model-request";
import { dropModelSelections } from "./patch";
import { PlannerOutputSchema } from "./plan-validate";
import { prepare, type ModelPort, type PrepareResult } from "./prepare";
import { CLASSIFIER_PROMPT } from "./prompts";
import { ClassifierOutputSchema, fallbackKind, replyUpdates, type ReplyKind } from "./reply";
import { RerankerOutputSchema } from "./rerank";
import { getIndex } from "./resolve-index";
import type { Referent } from "./resolve-tasks";
import type { DocsIndex } from "./docs";
import { answeredClarifications } from "./store/interactions";
import { fold } from "./text";
import type { StageTrace } from "./trace";
import type { Plan, WorkspaceSnapshot } from "./types";
import { extractCitations } from "./validate-response";

/**
 * The Workbench's effect handlers: each answers one effect the Interaction machine emitted with
 * the events it feeds back, and keeps nothing of the turn — what a later step needs travels in
 * the events into the machine's context. Ports: the model client, reads, the run's stream, the
 * stage trace, and the request's workspace.
 */

export interface Workspace {
  parsed: WorkspaceSnapshot;
  sha: string;
}

export interface EffectPorts {
  deps: Deps;
  run: Run<WorkbenchEvents>;
  trace: StageTrace;
  conversationId: string;
  workspace: Workspace;
  docs: DocsIndex | null;
  /** Stage 07 of a new request (why the message is one); a reply turn's comes from its machine. */
  requestStage: Record<string, unknown>;
  /** The run is announced: `run_started` and the request's first stages (the route knows the request). */
  started: (e: Extract<InteractionEmitted, { type: "effect.started" }>) => void;
}

type Effect<T extends InteractionEmitted["type"]> = Extract<InteractionEmitted, { type: T }>;

/** A structured-output port over the LLM client: the parsed value, or null (fallback path). */
export function structuredPort(
  deps: Deps,
  run: Run<WorkbenchEvents>,
  role: Role,
  schema: ZodType,
  name: string,
): ModelPort {
  return async (messages) => {
    const r = await deps.llm.structured(role, messages, schema, name, { signal: run.signal });
    return r.ok ? r.value : null;
  };
}

/** Recent messages and the documents earlier turns were about (newest first): stage 08 and "она". */
export async function conversationContext(
  sql: Tx,
  conversationId: string,
): Promise<{ history: ConversationMessage[]; referents: Referent[] }> {
  const msgs = await listMessages(sql, conversationId, 40);
  const history = msgs
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => ({ role: m.role as "user" | "assistant", text: m.text }));
  const referents = [...msgs]
    .reverse()
    .flatMap((m) =>
      ((m.meta as { targets?: Omit<Referent, "turn">[] }).targets ?? []).map((t) => ({ ...t, turn: m.seq })),
    );
  return { history, referents };
}

/** How a reply was read, as stage 07 reports it. */
export const replyStage = (r: ReplyFacts) => ({
  kind: r.kind,
  decidedBy: r.decidedBy,
  clarificationId: r.clarificationId,
  candidateId: r.candidateId,
  updates: r.updates,
  classifierOutput: r.classifierOutput,
  basePlanVersion: r.basePlanVersion,
});

/** Stage 07: what this turn continues (a reply and its patch) or why it is a new request. */
function interactionStage(e: Effect<"effect.prepare">, p: EffectPorts): Record<string, unknown> {
  const reply = e.reply && { reply: replyStage(e.reply), invalidated: e.invalidated };
  return {
    ...(reply ?? p.requestStage),
    status: reply ? "continuation" : "new",
    interactionId: e.interactionId,
    planVersion: e.planVersion,
    workspaceChanged: e.workspaceChanged,
    snapshotSha256: p.workspace.sha,
    previousSnapshotSha256: e.previousSnapshotSha256,
  };
}

/** What preparation decided, as the machine's event. */
function preparedEvent(r: PrepareResult): InteractionEvent {
  const common = { plan: r.plan, targets: r.targets, reasons: [...r.adequacy.reasons], calls: r.preparatoryCalls };
  if (r.outcome === "answer")
    return {
      type: "prepared.answer",
      ...common,
      request: { messages: r.messages!, modelRequest: r.modelRequest!, notice: r.notice ?? null },
    };
  if (r.outcome === "plain") return { type: "prepared.plain", ...common, answer: r.plainAnswer ?? "" };
  const q = r.clarification!;
  return {
    type: "prepared.clarify",
    ...common,
    clarificationId: `clarification-${randomUUID()}`,
    question: { taskId: q.taskId, slot: q.slot, question: q.question, candidates: q.candidates },
  };
}

/** The kind of a free-text reply: by the CLASSIFIER, or by rule when it is switched off (WORKBENCH_CLASSIFIER=off) or fails. */
async function replyKind(e: Effect<"effect.classifyReply">, p: EffectPorts) {
  if (!stageEnabled("classifier")) return fallbackKind(e.text, e.candidates, "classifier_off");
  const candidates = e.candidates.map((c) => ({
    candidateId: c.candidateId,
    displayName: c.displayName,
    documentType: c.documentType,
    folder: c.folderName,
  }));
  const r = await p.deps.llm.structured(
    "classifier",
    [
      { role: "system", content: CLASSIFIER_PROMPT.text },
      { role: "user", content: JSON.stringify({ question: e.question, candidates, reply: e.text }) },
    ],
    ClassifierOutputSchema,
    "workbench_reply_kind",
    { signal: p.run.signal },
  );
  const calls = { classifier: 1 };
  if (r.ok) return { kind: r.value.kind, decidedBy: "classifier", classifierOutput: r.value, calls };
  return {
    ...fallbackKind(e.text, e.candidates, "classifier_fallback"),
    classifierOutput: { invalid: r.error.code },
    calls,
  };
}

/** `effect.classifyReply`: the kind (a model call only when the machine asks for one), then the updates it makes. */
async function classifyReply(e: Effect<"effect.classifyReply">, p: EffectPorts): Promise<InteractionEvent> {
  const k: { kind: ReplyKind; decidedBy: string; classifierOutput?: unknown; calls?: { classifier: number } } =
    e.askModel ? await replyKind(e, p) : { kind: "answer", decidedBy: "free_text_for_open_slot" };
  const { index } = getIndex(p.workspace.parsed, p.workspace.sha);
  const r = replyUpdates({ kind: k.kind, text: e.text, candidates: e.candidates, taskId: e.taskId }, e.task, index);
  return {
    type: "reply.classified",
    ...k,
    decidedBy: r.candidateId ? `${k.decidedBy}+resolver` : k.decidedBy,
    ...r,
  };
}

/** `effect.prepare`: stages 02–11 over the request's workspace (prepare.ts). */
async function prepareTurn(e: Effect<"effect.prepare">, p: EffectPorts): Promise<InteractionEvent> {
  const { deps, run, workspace } = p;
  const sql = deps.db.sql;
  const ctx = await conversationContext(sql, p.conversationId);
  const answered = await answeredClarifications(sql, e.interactionId);
  const { index, cached } = getIndex(workspace.parsed, workspace.sha);
  // A changed workspace: the model's earlier choices of documents no longer there are dropped.
  const plan =
    e.plan && e.workspaceChanged ? dropModelSelections(e.plan as Plan, (id) => index.byIdentity.has(fold(id))) : e.plan;
  const result = await prepare({
    text: e.rootText,
    planVersion: e.planVersion,
    ...(plan ? { plan } : {}),
    workspace: workspace.parsed,
    snapshotSha256: workspace.sha,
    index,
    indexCached: cached,
    docs: p.docs,
    referents: ctx.referents,
    history: ctx.history,
    clarifications: e.answered ? [...answered, e.answered] : answered,
    preparatoryBudget: e.preparatoryBudget,
    interaction: interactionStage(e, p),
    // A switched-off stage has no port: prepare() then keeps to its deterministic path.
    ports: {
      ...(stageEnabled("planner")
        ? { planner: structuredPort(deps, run, "planner", PlannerOutputSchema, "workbench_plan") }
        : {}),
      ...(stageEnabled("reranker")
        ? { reranker: structuredPort(deps, run, "reranker", RerankerOutputSchema, "workbench_rerank") }
        : {}),
    },
    trace: p.trace,
  });
  return preparedEvent(result);
}

/**
 * `effect.answer`: stage 12 on the stream (doc/streaming.md) — a sentence reaches the client as
 * `token` only after it passed validation; a rejected answer is replaced, never shown.
 */
async function answer(e: Effect<"effect.answer">, p: EffectPorts): Promise<InteractionEvent> {
  const { run, trace } = p;
  if (!e.request) throw new AppError("internal", "effect.answer without the prepared request");
  const { messages, modelRequest, notice } = e.request;
  // The unsupported part of a compound request is said first, in the Workbench's own words.
  const prefix = notice ? `${notice}\n\n` : "";
  if (prefix) run.emit("token", { delta: prefix });
  const { index } = getIndex(p.workspace.parsed, p.workspace.sha);
  const opts = {
    exists: (id: string) => index.byIdentity.has(fold(id)),
    passed: passedIdentities(modelRequest),
    referenced: referencedIdentities(modelRequest),
    numbers: contextNumbers(modelRequest),
  };
  const checker = workbenchAnswerChecker(opts);
  const gate = new ValidatedStream(checker, (delta) => run.emit("token", { delta }));
  const r = await p.deps.llm.stream("answer", messages, { signal: run.signal, onDelta: (delta) => gate.push(delta) });
  const calls = { answer: 1 };
  if (!r.ok) {
    trace.record("12", "failed", { reason: r.error.code, message: r.error.message });
    if (r.error.code === "cancelled") throw new AppError("internal", "client went away");
    // The machine decides what the failure means (a stored `failed` request, or a discarded reply).
    return { type: "model.failed", role: "answer", code: r.error.code, calls };
  }
  const gated = gate.end();
  const validation = gatedValidation(r.value, opts, checker.rejected);
  const checked = { ok: validation.ok, issues: validation.issues };
  if (gated.ok && validation.ok) {
    trace.record("12", "ok", validation);
    const text = prefix + r.value;
    return {
      type: "answered",
      answer: text,
      validationOk: true,
      validation: checked,
      citations: validation.citations,
      calls,
    };
  }
  // Rejected: the user gets the replacement (the client drops every token, the notice too),
  // the run keeps what the model said and what was shown.
  const text = prefix + replacementAnswer(modelRequest, opts);
  const replacement = { text, reason: "validation_failed" as const, issues: validation.issues.map(issueText) };
  trace.record("12", "ok", {
    ...validation,
    replaced: true,
    modelAnswer: r.value,
    released: gated.released,
    gateIssues: gated.issues,
  });
  run.emit("answer_replaced", replacement);
  return {
    type: "answered",
    answer: text,
    validationOk: false,
    validation: checked,
    citations: extractCitations(text),
    calls,
  };
}

/** The map the driver runs the Interaction machine's effects with. */
export const workbenchEffects = (p: EffectPorts): EffectHandlers<typeof interactionMachine> => ({
  "effect.started": (e) => p.started(e),
  "effect.classifyReply": (e) => classifyReply(e, p),
  "effect.prepare": (e) => prepareTurn(e, p),
  "effect.answer": (e) => answer(e, p),
});
