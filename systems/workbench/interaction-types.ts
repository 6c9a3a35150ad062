import type { PlanUpdate } from "./patch";
import type { PromptMessage } from "./prepare";
import type { ModelRequest } from "./model-request";
import type { ReplyKind } from "./reply";
import type { Candidate, Plan } from "./types";

/**
 * What the Interaction machine (interaction.machine.ts) holds and takes: kept apart from the
 * machine so the machine file is its statechart and the guards' pure helpers.
 */

export interface WorkspaceRef {
  generation: string;
  snapshotSha256: string;
}

export interface Target {
  identity: string;
  documentType: string;
  displayName: string;
}

/** Model calls of one run (seed 001 table: at most 2 preparatory calls and 1 final call). */
export interface CallCounter {
  planner: number;
  reranker: number;
  classifier: number;
  answer: number;
}

/** The question an Interaction waits on: what the clarification row and `clarification_required` carry. */
export interface OpenQuestion {
  id: string;
  taskId: string;
  slot: string;
  question: string;
  candidates: Candidate[];
}

/**
 * The clarification answer of this turn: what the user sent (with the question it answers, as
 * the route read it from the projection) and, once classified, what it is.
 */
export interface ReplyFacts {
  clarificationId: string;
  taskId: string;
  question: string;
  text: string;
  selectedCandidateId: string | null;
  candidates: Candidate[];
  basePlanVersion: number;
  /** The workspace the reply was sent with (the continuation prepares over it). */
  workspace: WorkspaceRef;
  kind: ReplyKind | null;
  decidedBy: string | null;
  candidateId: string | null;
  updates: PlanUpdate[];
  classifierOutput: unknown;
}

/** The answer call's request as preparation built it (carried to `effect.answer`, cleared once answered). */
export interface AnswerRequest {
  messages: PromptMessage[];
  modelRequest: ModelRequest;
  notice: string | null;
}

/**
 * What this turn did that its closing events and run outcome report (model calls, adequacy
 * reasons, the answer check). Reset when a turn starts; set only from fields the v3 effect
 * results carry, so older logs replay to these defaults.
 */
export interface TurnFacts {
  origin: "request" | "reply" | null;
  calls: CallCounter;
  reasons: string[];
  outcome: "answer" | "clarify" | "plain" | null;
  validation: { ok: boolean; issues: unknown[] } | null;
  citations: string[];
}

export const emptyCalls = (): CallCounter => ({ planner: 0, reranker: 0, classifier: 0, answer: 0 });
export const emptyTurn = (): TurnFacts => ({
  origin: null,
  calls: emptyCalls(),
  reasons: [],
  outcome: null,
  validation: null,
  citations: [],
});

export interface InteractionContext {
  interactionId: string;
  conversationId: string;
  rootText: string;
  plan: Plan | null;
  planVersion: number;
  workspace: WorkspaceRef | null;
  openClarificationId: string | null;
  clarifications: number;
  targets: Target[];
  answer: string | null;
  validationOk: boolean | null;
  error: { code: string; message: string } | null;
  supersededBy: string | null;
  /** Tasks whose results the last patch invalidated (re-derived by the next preparation). */
  invalidated: string[];
  /**
   * The clarification whose reply this turn applies (with its continuation), until the turn
   * rests: it decides where a model failure leads. Null in every stored snapshot.
   */
  replyInTurn: string | null;
  /** v3: the open (or last asked) question. */
  question: OpenQuestion | null;
  /** v3: the clarification answer of the last reply turn. */
  reply: ReplyFacts | null;
  /** v3: the answer call's request while it is pending. */
  request: AnswerRequest | null;
  /** v3: what the current (or last) turn did. */
  turn: TurnFacts;
}

export interface InteractionInput {
  interactionId: string;
  conversationId: string;
  rootText: string;
}

/** Optional on every effect result: the model calls the effect made (older logs have none). */
type Calls = { calls?: Partial<CallCounter> };

export type ReplyReceived = {
  type: "reply.received";
  clarificationId: string;
  taskId: string;
  question: string;
  basePlanVersion: number;
  text: string;
  selectedCandidateId: string | null;
  candidates: Candidate[];
  workspace: WorkspaceRef;
};

export type InteractionEvent =
  /** A new request's turn (v3: `origin`), or any turn's start in v1/v2 logs. */
  | { type: "prepare"; workspace: WorkspaceRef; origin?: "request" }
  | ({ type: "prepared.answer"; plan: Plan; targets: Target[]; reasons?: string[]; request?: AnswerRequest } & Calls)
  | ({
      type: "prepared.clarify";
      plan: Plan;
      clarificationId: string;
      targets: Target[];
      reasons?: string[];
      question?: Omit<OpenQuestion, "id">;
    } & Calls)
  | ({ type: "prepared.plain"; plan: Plan; answer: string; targets: Target[]; reasons?: string[] } & Calls)
  | ({
      type: "answered";
      answer: string;
      validationOk: boolean;
      validation?: { ok: boolean; issues: unknown[] };
      citations?: string[];
    } & Calls)
  /** The answer model failed (its client's error code: unavailable, timeout, invalid_output…). */
  | ({ type: "model.failed"; role: "answer"; code: string } & Calls)
  /** Version 1's failure event (the handler chose the message): kept so v1 logs replay. */
  | { type: "failed"; code: string; message: string }
  /** v3: a clarification answer as sent; the machine's guards refuse a stale, foreign or repeated one. */
  | ReplyReceived
  /** v3: what the classification effect made of a free-text answer. */
  | ({
      type: "reply.classified";
      kind: ReplyKind;
      decidedBy: string;
      candidateId: string | null;
      updates: PlanUpdate[];
      classifierOutput?: unknown;
    } & Calls)
  /** v1/v2: an answer classified before the turn (kept so their logs replay). */
  | {
      type: "reply.answer";
      clarificationId: string;
      basePlanVersion: number;
      updates: PlanUpdate[];
      candidates: Candidate[];
    }
  | { type: "reply.unclear"; clarificationId: string; basePlanVersion: number }
  | { type: "cancel" }
  | { type: "supersede"; by: string };

export type InteractionEmitted =
  | { type: "effect.started"; interactionId: string; planVersion: number; continuation: boolean }
  | {
      type: "effect.classifyReply";
      text: string;
      question: string;
      candidates: Candidate[];
      /** Free text for a slot with no candidates and no command: an answer without asking a model. */
      askModel: boolean;
      /** The task the question is about, and (when the plan still has it) its entity type. */
      taskId: string;
      /** `mentions`: what the task asked for, kept by a correction that only changes the type («не отчёт, а форму»). */
      task: { id: string; entityType: string | undefined; mentions?: string[] } | null;
    }
  | {
      type: "effect.prepare";
      interactionId: string;
      planVersion: number;
      rootText: string;
      plan: Plan | null;
      workspaceChanged: boolean;
      previousSnapshotSha256: string | null;
      preparatoryBudget: number;
      answered: { question: string; answer: string } | null;
      /** The reply this turn applies (stage 07), with the tasks its patch invalidated. */
      reply: ReplyFacts | null;
      invalidated: string[];
    }
  | { type: "effect.answer"; interactionId: string; planVersion: number; request: AnswerRequest | null };

/** Seed 001 table: at most 2 preparatory calls per run (the classifier's included). */
export const MAX_PREPARATORY_CALLS = 2;

/** What the user reads when the answer model fails (CONTRACT.md code `model_unavailable`). */
export const MODEL_FAILURE = {
  request: {
    code: "model_unavailable",
    message: "Модель ответа сейчас недоступна. Запрос сохранён — попробуйте отправить его ещё раз.",
  },
  reply: {
    code: "model_unavailable",
    message: "Модель ответа сейчас недоступна. Ответ на уточнение не применён — отправьте его ещё раз.",
  },
} as const;

/** Said before a question asked again because the previous answer could not be tied to it. */
export const UNCLEAR_PREFIX = "Не удалось сопоставить ответ с вопросом. ";

/** Why a clarification answer cannot be taken (the route's 409/422; the message is what the user reads). */
export interface ReplyRefusal {
  code: "conflict" | "unknown_candidate";
  message: string;
  details: Record<string, unknown>;
}
