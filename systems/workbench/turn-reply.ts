import { randomUUID } from "node:crypto";
import { AppError } from "../../driver/errors";
import { stageEnabled } from "../../driver/stage-switches";
import { restoreRow, runTurn } from "../../driver/turn";
import { pureTransition } from "../../driver/pure";
import { loadSnapshot } from "../../storage/snapshots";
import { clarificationSpec, type ClarificationEvent } from "./clarification.machine";
import { interactionSpec, type InteractionContext, type InteractionEvent } from "./interaction.machine";
import {
  claimClarification,
  closeClarification,
  getClarification,
  getInteraction,
  openClarificationOf,
  releaseClarificationClaim,
  upsertInteraction,
  type ClarificationRow,
  type InteractionRow,
} from "./store/interactions";
import { appendMessages } from "../../storage/messages";
import { parseClause } from "./plan";
import type { PlanUpdate } from "./patch";
import { CLASSIFIER_PROMPT } from "./prompts";
import {
  ClassifierOutputSchema,
  classifyReplyByCode,
  currentOrArchived,
  descriptiveChoice,
  obviousNewRequest,
  type ReplyKind,
} from "./reply";
import { resolveMention } from "./resolve";
import { getIndex } from "./resolve-index";
import { isReference } from "./resolve-tasks";
import type { Candidate, Plan } from "./types";
import type { Deps } from "../../http/deps";
import { transitionStored } from "../../driver/side-machines";
import { clarificationKey, interactionKey } from "./stored-machines";
import type { CallCounter, PendingReply, Workspace } from "./turn-types";

export interface ReplyBody {
  text: string;
  interactionId?: string;
  replyToClarificationId?: string;
  selectedCandidateId?: string;
  basePlanVersion?: number;
}

export type { PendingReply } from "./turn-types";

/** What the message turns into once its reply has been classified (and, if so, applied). */
export type ReplyOutcome =
  | { kind: "new_request"; stage: Record<string, unknown> }
  | {
      kind: "continue";
      interaction: InteractionRow;
      planVersion: number;
      stage: Record<string, unknown>;
      pending: PendingReply;
    }
  | { kind: "cancelled"; interaction: InteractionRow; stage: Record<string, unknown> };

const conflict = (message: string, details?: unknown) => new AppError("conflict", message, details);

/**
 * Before the stream opens (so refusals are plain HTTP errors): find the clarification the
 * message answers, check it is still open and the plan version current, claim it, classify the
 * reply and check that it applies. A concurrent answer loses with 409. A cancel is applied here;
 * an answer is applied only with its continuation (PendingReply), so a continuation that fails
 * leaves the clarification open and the same answer can be sent again.
 */
export async function handleReply(
  deps: Deps,
  conversationId: string,
  body: ReplyBody,
  workspace: Workspace,
  calls: CallCounter,
  /** The claimed run's signal: the classifier call stops with it and its log line names the request. */
  signal?: AbortSignal,
): Promise<ReplyOutcome> {
  const sql = deps.db.sql;
  let interaction: InteractionRow | null = null;
  let clar: ClarificationRow | null = null;
  if (body.replyToClarificationId) {
    clar = await getClarification(sql, body.replyToClarificationId);
    interaction = clar ? await getInteraction(sql, clar.interactionId) : null;
    if (!clar || !interaction || interaction.conversationId !== conversationId)
      throw new AppError("not_found", "Такого уточнения в этом диалоге нет.");
    if (body.interactionId && body.interactionId !== interaction.id)
      throw new AppError("invalid_request", "Уточнение относится к другому запросу (interactionId).");
  } else if (body.interactionId) {
    interaction = await getInteraction(sql, body.interactionId);
    if (!interaction || interaction.conversationId !== conversationId)
      throw new AppError("not_found", "Такого запроса (interactionId) в этом диалоге нет.");
    clar = interaction.status === "awaiting_clarification" ? await openClarificationOf(sql, interaction.id) : null;
    // A finished Interaction has nothing to answer: the message is a new request.
    if (!clar) {
      if (body.selectedCandidateId)
        throw new AppError("unknown_candidate", "У этого запроса нет открытого уточнения с вариантами.");
      return {
        kind: "new_request",
        stage: { reply: { kind: "new_request", decidedBy: "no_open_clarification", interactionId: interaction.id } },
      };
    }
  }
  if (!clar || !interaction) return { kind: "new_request", stage: {} };

  const candidates = clar.candidates as Candidate[];
  if (body.selectedCandidateId && !candidates.some((c) => c.candidateId === body.selectedCandidateId)) {
    throw new AppError("unknown_candidate", "Можно выбрать только один из предложенных вариантов.", {
      selectedCandidateId: body.selectedCandidateId,
      allowed: candidates.map((c) => c.candidateId),
    });
  }
  if (clar.status !== "open")
    throw conflict("На это уточнение уже ответили (или оно закрыто).", {
      clarificationId: clar.id,
      status: clar.status,
    });
  if (interaction.status !== "awaiting_clarification")
    throw conflict("Запрос уже не ждёт уточнения.", { status: interaction.status });
  const base = body.basePlanVersion ?? clar.planVersion;
  if (base !== interaction.planVersion)
    throw conflict("План запроса уже изменился; обновите состояние.", {
      basePlanVersion: base,
      planVersion: interaction.planVersion,
    });
  const claimToken = randomUUID();
  // A claim whose run has not started (or stopped beating) lapses as an abandoned run does (RUN_STALE_MS).
  if (!(await claimClarification(sql, clar.id, claimToken, deps.config.runs.staleMs))) {
    throw conflict("На это уточнение уже отвечают (или оно закрыто).", { clarificationId: clar.id });
  }
  try {
    const outcome = await classifyAndCheck(
      deps,
      conversationId,
      body,
      workspace,
      calls,
      interaction,
      clar,
      base,
      claimToken,
      signal,
    );
    if (outcome.kind === "new_request") await releaseClarificationClaim(sql, clar.id, claimToken);
    return outcome;
  } catch (e) {
    await releaseClarificationClaim(sql, clar.id, claimToken).catch(() => {});
    throw e;
  }
}

async function classifyAndCheck(
  deps: Deps,
  conversationId: string,
  body: ReplyBody,
  workspace: Workspace,
  calls: CallCounter,
  interaction: InteractionRow,
  clar: ClarificationRow,
  base: number,
  claimToken: string,
  signal?: AbortSignal,
): Promise<ReplyOutcome> {
  const sql = deps.db.sql;
  const candidates = clar.candidates as Candidate[];

  // ---- classification: code first, the CLASSIFIER only for ambiguous free text ----
  const byCode = classifyReplyByCode(body.text, candidates, body.selectedCandidateId);
  let kind: ReplyKind;
  let decidedBy: string;
  let candidateId: string | null = null;
  let classifierOutput: unknown = undefined;
  if (byCode.kind === "answer") {
    kind = "answer";
    candidateId = byCode.candidateId;
    decidedBy = byCode.by;
  } else if (byCode.kind === "cancel") {
    kind = "cancel";
    decidedBy = "command";
  } else if (candidates.length === 0 && !byCode.hasCommand) {
    kind = "answer";
    decidedBy = "free_text_for_open_slot";
  }
  // Classifier switched off (WORKBENCH_CLASSIFIER=off): the seed's fallback — the text is an answer, resolved again.
  else if (!stageEnabled("classifier")) {
    // No verdict: an obvious request of its own starts anew; anything else is an answer.
    const fresh = obviousNewRequest(body.text, candidates);
    kind = fresh ? "new_request" : "answer";
    decidedBy = fresh ? "classifier_off+new_request" : "classifier_off";
  } else {
    calls.classifier++;
    const r = await deps.llm.structured(
      "classifier",
      [
        { role: "system", content: CLASSIFIER_PROMPT.text },
        {
          role: "user",
          content: JSON.stringify({
            question: clar.question,
            candidates: candidates.map((c) => ({
              candidateId: c.candidateId,
              displayName: c.displayName,
              documentType: c.documentType,
              folder: c.folderName,
            })),
            reply: body.text,
          }),
        },
      ],
      ClassifierOutputSchema,
      "workbench_reply_kind",
      { signal },
    );
    classifierOutput = r.ok ? r.value : { invalid: r.error.code };
    // Invalid or unsure → the text is treated as an answer and resolved again (seed 000).
    const fresh = !r.ok && obviousNewRequest(body.text, candidates);
    kind = r.ok ? r.value.kind : fresh ? "new_request" : "answer";
    decidedBy = r.ok ? "classifier" : fresh ? "classifier_fallback+new_request" : "classifier_fallback";
  }

  const plan = interaction.plan as Plan;
  const task = plan?.tasks.find((t) => t.id === clar!.taskId);
  let updates: PlanUpdate[] = [];
  // A classified answer is resolved again against the closed list first ("актуальную" → the
  // non-archived candidate), then against the workspace as a new mention.
  if (kind === "answer" && !candidateId) {
    const chosen = descriptiveChoice(body.text, candidates) ?? currentOrArchived(body.text, candidates);
    if (chosen) {
      candidateId = chosen;
      decidedBy = `${decidedBy}+resolver`;
    }
  }
  if ((kind === "answer" || kind === "correction") && candidateId)
    updates = [{ taskId: clar.taskId, field: "resolvedEntity", candidateId }];
  else if ((kind === "answer" || kind === "correction") && task) {
    updates = mentionUpdates(body.text, task.id, task.entityType, workspace);
    if (updates.length === 0) kind = "unclear";
  } else if (kind === "answer" || kind === "correction") kind = "unclear";

  const stage = {
    reply: { kind, decidedBy, clarificationId: clar.id, candidateId, updates, classifierOutput, basePlanVersion: base },
  };
  if (kind === "new_request") return { kind: "new_request", stage };

  const event: InteractionEvent =
    kind === "cancel"
      ? { type: "cancel" }
      : kind === "unclear"
        ? { type: "reply.unclear", clarificationId: clar.id, basePlanVersion: base }
        : { type: "reply.answer", clarificationId: clar.id, basePlanVersion: base, updates, candidates };
  const clarEvent = (messageId: string): ClarificationEvent =>
    kind === "cancel"
      ? { type: "cancel", messageId }
      : kind === "unclear"
        ? { type: "unclear", messageId }
        : { type: "answer", messageId, candidateId, kind: kind === "correction" ? "correction" : "answer" };
  const expectedState = kind === "cancel" ? "cancelled" : "preparing";
  const key = interactionKey(interaction.id);
  const userMessage = {
    text: body.text,
    meta: { interactionId: interaction.id, clarificationId: clar.id, replyKind: kind, decidedBy, candidateId },
  };

  // Checked now, against the snapshot as stored, so a reply that does not apply is a plain 409.
  const stored = await loadSnapshot(sql, key);
  const loaded = restoreRow(interactionSpec, key, stored);
  if (!stored || !loaded) throw conflict("Ответ не применим к текущему состоянию запроса.");
  const [after] = pureTransition(interactionSpec.machine, loaded.snapshot, event as never);
  const next = after.context as InteractionContext;
  if (
    String(after.value) !== expectedState ||
    (event.type === "reply.answer" && next.planVersion !== interaction.planVersion + 1)
  ) {
    throw conflict("Ответ не применим к текущему состоянию запроса.");
  }

  if (kind === "cancel") {
    // No continuation to wait for: the cancel is the whole turn.
    await runTurn({
      sql,
      run: null,
      spec: interactionSpec,
      key,
      conversationId,
      stored,
      events: [event],
      log: {},
      commit: async (tx, snap) => {
        const c = snap.context as InteractionContext;
        const [msg] = await appendMessages(tx, conversationId, [{ role: "user", ...userMessage }]);
        if (!(await closeClarification(tx, clar.id, "cancelled", msg!.id, claimToken)))
          throw conflict("На это уточнение уже ответили.");
        await transitionStored(tx, clarificationSpec, clarificationKey(clar.id), conversationId, clarEvent(msg!.id));
        await upsertInteraction(tx, {
          id: interaction.id,
          conversationId,
          rootMessageId: null,
          status: String(snap.value),
          plan: c.plan,
          planVersion: c.planVersion,
          workspaceGeneration: null,
          workspaceSnapshotSha256: null,
          documentationVersion: null,
        });
      },
    });
    return { kind: "cancelled", interaction, stage };
  }
  return {
    kind: "continue",
    interaction,
    planVersion: next.planVersion,
    stage: { ...stage, invalidated: next.invalidated },
    pending: {
      claimToken,
      clarificationId: clar.id,
      stored,
      event,
      userMessage,
      closeStatus: kind === "unclear" ? "unclear" : "answered",
      clarificationEvent: clarEvent,
      answered: kind === "unclear" ? null : { question: clar.question, answer: body.text },
    },
  };
}

/**
 * A free-text answer or correction becomes a new mention (and type) for the task — only when it
 * names something in the current workspace; otherwise it is unclear and the question is asked again.
 */
function mentionUpdates(
  text: string,
  taskId: string,
  entityType: string | undefined,
  workspace: Workspace,
): PlanUpdate[] {
  const p = parseClause(text);
  const name = p.mentions[0] ?? p.names[0];
  const mention = (name && !isReference(name) ? name : undefined)?.trim();
  if (!mention) return [];
  const type = p.entityType ?? p.nameType ?? entityType;
  const { index } = getIndex(workspace.parsed, workspace.sha);
  const r = resolveMention(index, { mention, ...(type ? { entityType: type } : {}) });
  if (r.status === "not_found") return [];
  const out: PlanUpdate[] = [{ taskId, field: "mention", value: mention }];
  const newType = p.entityType ?? p.nameType;
  if (newType && newType !== entityType) out.push({ taskId, field: "entityType", value: newType });
  return out;
}
