import { randomUUID } from "node:crypto";
import { AppError, errorStatus, type ErrorCode } from "../../driver/errors";
import type { Run } from "../../driver/run";
import type { WorkbenchEvents } from "./contract";
import { stageEnabled } from "../../driver/stage-switches";
import { runTurn } from "../../driver/turn";
import type { Role } from "../../llm/client";
import { clarificationSpec } from "./clarification.machine";
import { interactionSpec, MODEL_FAILURE, type WorkspaceRef } from "./interaction.machine";
import type { Tx } from "../../storage/db";
import {
  activeInteraction,
  answeredClarifications,
  closeClarification,
  insertClarification,
  openClarificationOf,
  upsertInteraction,
} from "./store/interactions";
import { appendMessages, listMessages } from "../../storage/messages";
import type { ConversationMessage } from "./model-request";
import { passedIdentities, referencedIdentities } from "./model-request";
import { contextNumbers } from "./answer-numbers";
import { PlannerOutputSchema } from "./plan-validate";
import { dropModelSelections } from "./patch";
import { prepare, type ModelPort, type PrepareResult } from "./prepare";
import { RerankerOutputSchema } from "./rerank";
import { getIndex } from "./resolve-index";
import type { Referent } from "./resolve-tasks";
import { fold } from "./text";
import type { StageTrace } from "./trace";
import type { Plan } from "./types";
import { extractCitations, validateResponse } from "./validate-response";
import { gatedValidation, issueText, replacementAnswer, workbenchAnswerChecker } from "./answer-checker";
import { ValidatedStream } from "../../driver/validated-stream";
import type { Deps } from "../../http/deps";
import { modelCalls, type CallCounter, type PendingReply, type Workspace } from "./turn-types";
import { loadDocsIndex } from "./resources";
import { createStored, transitionStored } from "../../driver/side-machines";
import { clarificationKey, interactionKey } from "./stored-machines";

/** Seed 001 table: at most 2 preparatory calls and 1 final call per run. */
export const MAX_PREPARATORY_CALLS = 2;

export { modelCalls, newCounter, type CallCounter, type Workspace } from "./turn-types";

/** A structured-output port over the LLM client: the parsed value, or null (fallback path). */
export function structuredPort(
  deps: Deps,
  run: { signal: AbortSignal } | null,
  role: Role,
  schema: import("zod").ZodType,
  name: string,
): ModelPort {
  return async (messages) => {
    const r = await deps.llm.structured(role, messages, schema, name, run ? { signal: run.signal } : {});
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
  const referents: Referent[] = [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const targets = (
      msgs[i]!.meta as { targets?: Array<{ identity: string; documentType: string; displayName: string }> }
    ).targets;
    if (Array.isArray(targets)) for (const t of targets) referents.push({ ...t, turn: msgs[i]!.seq });
  }
  return { history, referents };
}

/** Closes the conversation's active Interaction (if another) as superseded, with its open question. */
async function supersedeActive(tx: Tx, conversationId: string, byId: string): Promise<string | null> {
  const active = await activeInteraction(tx, conversationId);
  if (!active || active.id === byId) return null;
  await transitionStored(tx, interactionSpec, interactionKey(active.id), conversationId, {
    type: "supersede",
    by: byId,
  });
  await upsertInteraction(tx, { ...projectionOf(active), status: "superseded" });
  const open = await openClarificationOf(tx, active.id);
  if (open && (await closeClarification(tx, open.id, "superseded", null))) {
    await transitionStored(tx, clarificationSpec, clarificationKey(open.id), conversationId, { type: "supersede" });
  }
  return active.id;
}

function projectionOf(r: {
  id: string;
  conversationId: string;
  rootMessageId: string | null;
  status: string;
  plan: unknown;
  planVersion: number;
  workspaceGeneration: string | null;
  workspaceSnapshotSha256: string | null;
  documentationVersion: string | null;
}) {
  return {
    id: r.id,
    conversationId: r.conversationId,
    rootMessageId: r.rootMessageId,
    status: r.status,
    plan: r.plan,
    planVersion: r.planVersion,
    workspaceGeneration: r.workspaceGeneration,
    workspaceSnapshotSha256: r.workspaceSnapshotSha256,
    documentationVersion: r.documentationVersion,
  };
}

export interface PreparationTurn {
  deps: Deps;
  run: Run<WorkbenchEvents>;
  trace: StageTrace;
  conversationId: string;
  interactionId: string;
  /** A new Interaction: its root message is stored and any active one is superseded. */
  isNew: boolean;
  rootText: string;
  /** The user message of this turn when it is not stored yet (the root of a new Interaction). */
  userMessage: { text: string; meta: Record<string, unknown> } | null;
  workspace: Workspace;
  /** The workspace the Interaction last saw (continuations): a different hash re-resolves. */
  previousSha: string | null;
  calls: CallCounter;
  /** Stage 07 payload. */
  interaction: Record<string, unknown>;
  /**
   * A continuation's clarification answer, applied in this turn's transaction: its event goes
   * to the machine before `prepare`, its message and the clarification's close are written with
   * the reply. Null for a new request.
   */
  reply?: PendingReply | null;
}

/**
 * One preparation turn of an Interaction through the driver: prepare → (answer) → one
 * transaction (snapshot, messages, clarification, projection, run events) → closing event.
 */
export async function runPreparationTurn(t: PreparationTurn): Promise<void> {
  const { deps, run, trace } = t;
  const sql = deps.db.sql;
  const ctx = await conversationContext(sql, t.conversationId);
  const docs = loadDocsIndex(deps.config.docsDir);
  const clarifications = t.isNew
    ? []
    : [...(await answeredClarifications(sql, t.interactionId)), ...(t.reply?.answered ? [t.reply.answered] : [])];
  const pending = t.reply ?? null;
  let prepared: PrepareResult | null = null;
  let validation: ReturnType<typeof validateResponse> | null = null;
  let replacement: { text: string; reason: "validation_failed"; issues: string[] } | null = null;
  let clarificationId: string | null = null;
  const workspaceChanged = t.previousSha !== null && t.previousSha !== t.workspace.sha;
  const wsRef: WorkspaceRef = { generation: t.workspace.parsed.generation, snapshotSha256: t.workspace.sha };
  const input = { interactionId: t.interactionId, conversationId: t.conversationId, rootText: t.rootText };
  const prepareEvent = { type: "prepare" as const, workspace: wsRef };
  // The citations of the answer the user got: the replacement's when the model's was rejected.
  const answerCitations = (): string[] => {
    const r = replacement as { text: string } | null;
    return r ? extractCitations(r.text) : ((validation as ReturnType<typeof validateResponse> | null)?.citations ?? []);
  };

  const result = await runTurn({
    sql,
    run,
    spec: interactionSpec,
    key: interactionKey(t.interactionId),
    conversationId: t.conversationId,
    input,
    // With a pending answer: the snapshot it was checked against (a concurrent change is a conflict at commit).
    ...(pending ? { stored: pending.stored } : {}),
    events: pending ? [pending.event as never, prepareEvent] : [prepareEvent],
    // The Interaction's event log (machine_events): what it was given, as the driver applied it.
    log: {},
    // A clarification answer is applied only with its continuation: when the answer model failed,
    // nothing of the turn is stored and the same answer can be sent again.
    discard: (snap) => snap.value === "reply_failed",
    effects: {
      "effect.prepare": async (e) => {
        let plan = (e.plan as Plan | null) ?? undefined;
        if (plan && workspaceChanged) {
          const { index } = getIndex(t.workspace.parsed, t.workspace.sha);
          plan = dropModelSelections(plan, (id) => index.byIdentity.has(fold(id)));
        }
        prepared = await prepare({
          text: e.rootText,
          planVersion: e.planVersion,
          ...(plan ? { plan } : {}),
          workspace: t.workspace.parsed,
          snapshotSha256: t.workspace.sha,
          docs,
          referents: ctx.referents,
          history: ctx.history,
          clarifications,
          preparatoryBudget: Math.max(0, MAX_PREPARATORY_CALLS - t.calls.classifier),
          interaction: {
            ...t.interaction,
            interactionId: t.interactionId,
            planVersion: e.planVersion,
            workspaceChanged,
            snapshotSha256: t.workspace.sha,
            previousSnapshotSha256: t.previousSha,
          },
          // A switched-off stage has no port: prepare() then keeps to its deterministic path.
          ports: {
            ...(stageEnabled("planner")
              ? { planner: structuredPort(deps, run, "planner", PlannerOutputSchema, "workbench_plan") }
              : {}),
            ...(stageEnabled("reranker")
              ? { reranker: structuredPort(deps, run, "reranker", RerankerOutputSchema, "workbench_rerank") }
              : {}),
          },
          trace,
        });
        t.calls.planner += prepared.preparatoryCalls.planner;
        t.calls.reranker += prepared.preparatoryCalls.reranker;
        const p = prepared as PrepareResult;
        if (p.outcome === "answer") return { type: "prepared.answer", plan: p.plan, targets: p.targets };
        if (p.outcome === "clarify") {
          clarificationId = `clarification-${randomUUID()}`;
          // The previous answer could not be tied to the question: say so, then ask again.
          if ((t.interaction.reply as { kind?: string } | undefined)?.kind === "unclear" && p.clarification) {
            p.clarification.question = `Не удалось сопоставить ответ с вопросом. ${p.clarification.question}`;
          }
          return { type: "prepared.clarify", plan: p.plan, clarificationId, targets: p.targets };
        }
        return { type: "prepared.plain", plan: p.plan, answer: p.plainAnswer ?? "", targets: p.targets };
      },
      "effect.answer": async () => {
        const p = prepared!;
        t.calls.answer++;
        // The unsupported part of a compound request is said first, in the Workbench's own words.
        const notice = p.notice ? `${p.notice}\n\n` : "";
        if (notice) run.emit("token", { delta: notice });
        // Stage 12 runs on the stream (doc/streaming.md): a sentence reaches the client as `token`
        // only after it passed validation; a rejected answer is replaced, never shown.
        const opts = {
          exists: (id: string) => p.index.byIdentity.has(fold(id)),
          passed: passedIdentities(p.modelRequest!),
          referenced: referencedIdentities(p.modelRequest!),
          numbers: contextNumbers(p.modelRequest!),
        };
        const checker = workbenchAnswerChecker(opts);
        const gate = new ValidatedStream(checker, (delta) => run.emit("token", { delta }));
        const r = await deps.llm.stream("answer", p.messages!, {
          signal: run.signal,
          onDelta: (delta) => gate.push(delta),
        });
        if (!r.ok) {
          trace.record("12", "failed", { reason: r.error.code, message: r.error.message });
          if (r.error.code === "cancelled") throw new AppError("internal", "client went away");
          // The machine decides what the failure means (a stored `failed` request, or a discarded reply).
          return { type: "model.failed" as const, role: "answer" as const, code: r.error.code };
        }
        const gated = gate.end();
        validation = gatedValidation(r.value, opts, checker.rejected);
        if (gated.ok && validation.ok) {
          trace.record("12", "ok", validation);
          return { type: "answered" as const, answer: notice + r.value, validationOk: true };
        }
        // Rejected: the user gets the replacement (the client drops every token, the notice too),
        // the run keeps what the model said and what was shown.
        const text = notice + replacementAnswer(p.modelRequest!, opts);
        replacement = { text, reason: "validation_failed", issues: validation.issues.map(issueText) };
        trace.record("12", "ok", {
          ...validation,
          replaced: true,
          modelAnswer: r.value,
          released: gated.released,
          gateIssues: gated.issues,
        });
        run.emit("answer_replaced", replacement);
        return { type: "answered" as const, answer: text, validationOk: false };
      },
    },
    commit: async (tx, snap) => {
      const c = snap.context;
      const state = String(snap.value);
      if (t.isNew) await supersedeActive(tx, t.conversationId, t.interactionId);
      const msgs: Parameters<typeof appendMessages>[2] = [];
      if (pending) msgs.push({ role: "user", ...pending.userMessage });
      if (t.userMessage)
        msgs.push({
          role: "user",
          text: t.userMessage.text,
          meta: { ...t.userMessage.meta, interactionId: t.interactionId },
        });
      const assistantIndex = msgs.length;
      const clar = prepared?.clarification;
      if (state === "awaiting_clarification" && clar) {
        msgs.push({
          role: "assistant",
          text: clar.question,
          meta: {
            interactionId: t.interactionId,
            kind: "clarification",
            clarificationId,
            taskId: clar.taskId,
            slot: clar.slot,
            candidates: clar.candidates,
          },
        });
      } else if (state === "completed") {
        msgs.push({
          role: "assistant",
          text: c.answer ?? "",
          meta: {
            interactionId: t.interactionId,
            kind: "answer",
            planVersion: c.planVersion,
            targets: c.targets,
            citations: answerCitations(),
            validationOk: c.validationOk,
          },
        });
      }
      const ids = await appendMessages(tx, t.conversationId, msgs, run.id);
      if (pending) {
        // The answer and its continuation commit together; a lost claim means another answer won.
        const answerId = ids[0]!.id;
        if (
          !(await closeClarification(tx, pending.clarificationId, pending.closeStatus, answerId, pending.claimToken))
        ) {
          throw new AppError("conflict", "На это уточнение уже ответили.");
        }
        await transitionStored(
          tx,
          clarificationSpec,
          clarificationKey(pending.clarificationId),
          t.conversationId,
          pending.clarificationEvent(answerId),
        );
      }
      await upsertInteraction(tx, {
        id: t.interactionId,
        conversationId: t.conversationId,
        rootMessageId: t.isNew && t.userMessage ? (ids[0]?.id ?? null) : null,
        status: state,
        plan: c.plan,
        planVersion: c.planVersion,
        workspaceGeneration: wsRef.generation,
        workspaceSnapshotSha256: wsRef.snapshotSha256,
        documentationVersion: docs?.version ?? null,
      });
      if (state === "awaiting_clarification" && clar && clarificationId) {
        await insertClarification(tx, {
          id: clarificationId,
          interactionId: t.interactionId,
          taskId: clar.taskId,
          slot: clar.slot,
          question: clar.question,
          questionMessageId: ids[assistantIndex]?.id ?? null,
          candidates: clar.candidates,
          planVersion: c.planVersion,
        });
        await createStored(
          tx,
          clarificationSpec,
          clarificationKey(clarificationId),
          t.conversationId,
          {
            id: clarificationId,
            interactionId: t.interactionId,
            taskId: clar.taskId,
            slot: clar.slot,
            question: clar.question,
            candidates: clar.candidates,
            planVersion: c.planVersion,
          },
          run.id,
        );
      }
    },
    closing: (snap) => {
      const c = snap.context;
      const status = snap.value;
      if (status === "reply_failed") throw new AppError("internal", "a discarded turn has no closing events");
      const state = String(status);
      trace.finish(
        state === "awaiting_clarification" ? "clarification_required" : state === "failed" ? "failed" : "not_needed",
      );
      if (state === "awaiting_clarification" && prepared?.clarification && clarificationId) {
        const q = prepared.clarification;
        return [
          {
            event: "clarification_required",
            data: {
              id: clarificationId,
              interactionId: t.interactionId,
              taskId: q.taskId,
              slot: q.slot,
              question: q.question,
              candidates: q.candidates,
              reasons: prepared.adequacy.reasons,
              planVersion: c.planVersion,
              modelCalls: modelCalls(t.calls),
            },
          },
        ];
      }
      if (state === "failed")
        return [
          {
            event: "error",
            data: { code: c.error?.code ?? "internal", message: c.error?.message ?? "Запрос не выполнен." },
          },
        ];
      return [
        {
          event: "final",
          data: {
            interactionId: t.interactionId,
            status,
            planVersion: c.planVersion,
            answer: c.answer ?? "",
            entityCitations: answerCitations(),
            validation: validation ? { ok: validation.ok, issues: validation.issues } : { ok: true, issues: [] },
            modelCalls: modelCalls(t.calls),
            ...(prepared && prepared.outcome === "plain" ? { reasons: prepared.adequacy.reasons } : {}),
          },
        },
      ];
    },
    outcome: (snap) => {
      const state = String(snap.value);
      const reasons: string[] = [...((prepared as PrepareResult | null)?.adequacy.reasons ?? [])];
      if (validation && !validation.ok) reasons.push("validation_failed");
      // A failed interaction commits (the request is kept), but its run is stored failed with the error's code.
      const failed = state === "failed" ? (snap.context.error?.code ?? "internal") : null;
      if (failed) reasons.push(failed);
      return {
        ...(failed ? { errorCode: (failed in errorStatus ? failed : "internal") as ErrorCode } : {}),
        outcome:
          state === "awaiting_clarification"
            ? "clarification"
            : state === "completed"
              ? prepared?.outcome === "plain"
                ? "plain_answer"
                : "answered"
              : state,
        reasonCodes: reasons,
      };
    },
  });
  if (result.discarded) {
    // The run ends with `error` (then `done`); the failed run frees the clarification's claim.
    throw new AppError(MODEL_FAILURE.reply.code, result.snapshot.context.error?.message ?? MODEL_FAILURE.reply.message);
  }
}
