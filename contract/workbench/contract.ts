import { z } from "zod";
import { userText } from "../user-text";
import {
  AnswerReplaced,
  Created,
  err,
  ok,
  runEvents,
  sseUnion,
  type EventsOf,
  type Operation,
  type SystemContract,
} from "../http";
import { CandidateSchema, PlanSchema, WorkspaceSnapshotSchema } from "./types";

/**
 * The Workbench's wire contract (CONTRACT §3) in one place: the message body the route parses,
 * the bodies it answers, the events a turn streams, and the operations of the OpenAPI document.
 */

export const WorkbenchMessageBody = z.object({
  text: userText(10_000, {
    empty: "Сообщение пустое.",
    tooLong: "Сообщение слишком длинное: не больше 10 000 символов. Сократите его, пожалуйста.",
  }),
  // Parsed by the route itself (readWorkspace): its hash is of what was sent, and an invalid
  // one is reported as `workspace: …`. The document shows the snapshot's schema.
  workspace: z
    .unknown()
    .optional()
    .describe("the trusted workspace snapshot (ExportLive, see WorkspaceSnapshot); omitted → the bundled sample"),
  interactionId: z.string().min(1).max(200).optional(),
  replyToClarificationId: z.string().min(1).max(200).optional(),
  selectedCandidateId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("must be a candidateId of that clarification's candidate snapshot"),
  basePlanVersion: z.number().int().positive().optional(),
  debug: z.boolean().optional(),
});
export type WorkbenchMessageBody = z.infer<typeof WorkbenchMessageBody>;

/** Model calls of the Interaction so far, by budget (CONTRACT §3.4) and by role. */
export const ModelCalls = z.object({
  preparatory: z.number().int(),
  final: z.number().int(),
  byRole: z.object({
    planner: z.number().int(),
    reranker: z.number().int(),
    classifier: z.number().int(),
    answer: z.number().int(),
  }),
});
const ReasonCodes = z.array(z.string()).describe("adequacy reason codes (CONTRACT §3.6, stage 09)");

export const ClarificationRequired = z.object({
  id: z.string(),
  interactionId: z.string(),
  taskId: z.string(),
  slot: z.string(),
  question: z.string(),
  candidates: z.array(CandidateSchema).describe("the closed candidate snapshot; may be empty"),
  reasons: ReasonCodes,
  planVersion: z.number().int(),
  modelCalls: ModelCalls,
});

export const InteractionStatus = z.enum([
  "preparing",
  "awaiting_clarification",
  "answering",
  "completed",
  "superseded",
  "cancelled",
  "failed",
]);

export const ValidationIssue = z.object({ code: z.string(), detail: z.string().optional() });
export const WorkbenchFinal = z.object({
  interactionId: z.string(),
  status: InteractionStatus.describe(
    "completed, or cancelled when the answer to a clarification cancelled the request",
  ),
  planVersion: z.number().int(),
  answer: z.string().describe("markdown; documents cited inline as [[identity]]"),
  entityCitations: z.array(z.string()),
  validation: z.object({ ok: z.boolean(), issues: z.array(ValidationIssue) }),
  modelCalls: ModelCalls,
  reasons: ReasonCodes.optional().describe("a plain answer (no answer model): why"),
});

export const workbenchEvents = {
  ...runEvents,
  clarification_required: ClarificationRequired,
  answer_replaced: AnswerReplaced,
  final: WorkbenchFinal,
};
export type WorkbenchEvents = EventsOf<typeof workbenchEvents>;
// The workbench system's entry among every system's run events (contract/http.ts `SystemEvents`).
declare module "../http" {
  interface SystemEvents {
    workbench: WorkbenchEvents;
  }
}
export const WorkbenchSseEvent = sseUnion(workbenchEvents);

const timestamp = z.string().describe("ISO 8601");
export const WorkbenchConversation = z.object({
  conversationId: z.string(),
  messages: z.array(
    z.object({
      seq: z.number().int(),
      role: z.enum(["user", "assistant", "system", "tool"]),
      text: z.string(),
      meta: z.record(z.string(), z.unknown()),
    }),
  ),
  interactions: z.array(
    z.object({ id: z.string(), status: InteractionStatus, planVersion: z.number().int(), createdAt: timestamp }),
  ),
});
export const Interaction = z.object({
  id: z.string(),
  conversationId: z.string(),
  status: InteractionStatus,
  planVersion: z.number().int(),
  plan: PlanSchema.nullable(),
  rootMessageId: z.string().nullable(),
  workspace: z.object({ generation: z.string().nullable(), snapshotSha256: z.string().nullable() }),
  documentationVersion: z.string().nullable(),
  clarifications: z.array(
    z.object({
      id: z.string(),
      taskId: z.string(),
      slot: z.string(),
      question: z.string(),
      candidates: z.array(CandidateSchema),
      status: z.string().describe("open, answered, unclear, cancelled, superseded"),
      planVersion: z.number().int(),
      questionMessageId: z.string().nullable(),
      answerMessageId: z.string().nullable(),
      createdAt: timestamp,
      resolvedAt: timestamp.nullable(),
    }),
  ),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const workbenchSchemas: Record<string, z.ZodType> = {
  WorkspaceSnapshot: WorkspaceSnapshotSchema,
  Plan: PlanSchema,
  Candidate: CandidateSchema,
  ModelCalls,
  ClarificationRequired,
  WorkbenchFinal,
  WorkbenchSseEvent,
  Interaction,
  WorkbenchConversation,
  ConversationCreated: Created.conversation,
};

const noConversation = err("Нет диалога");
export const workbenchOperations: Operation[] = [
  {
    operationId: "createWorkbenchConversation",
    role: "chat",
    credential: "issued",
    method: "post",
    path: "/v1/workbench/conversations",
    tag: "workbench",
    summary: "Новый диалог Configurator",
    description: "Создаёт диалог Configurator; возвращает `conversationId`.",
    responses: { 201: ok(Created.conversation, "Создан") },
  },
  {
    operationId: "getWorkbenchConversation",
    role: "chat",
    credential: "required",
    method: "get",
    path: "/v1/workbench/conversations/{id}",
    tag: "workbench",
    summary: "Сообщения и запросы диалога",
    description: "Сообщения диалога Configurator и его запросы (Interaction) со статусами.",
    responses: { 200: ok(WorkbenchConversation), 404: noConversation },
  },
  {
    operationId: "sendWorkbenchMessage",
    role: "chat",
    credential: "required",
    method: "post",
    path: "/v1/workbench/conversations/{id}/messages",
    tag: "workbench",
    summary: "Сообщение → поток SSE (12 этапов при debug)",
    description:
      "Один ход Workbench: подготовка, план, разрешение сущностей, при неоднозначности — `clarification_required` вместо догадки, иначе ответ с цитатами `[[identity]]` и его проверка. С тем же `Idempotency-Key` повтор отдаёт тот же запуск.",
    body: WorkbenchMessageBody,
    responses: {
      200: {
        description:
          "run_started, [stage…], clarification_required | token…, [answer_replaced], final, done (doc/streaming.md)",
        sse: WorkbenchSseEvent,
      },
      404: noConversation,
      409: err(
        "Уточнение уже отвечено, план устарел, диалог занят другим ходом (conversation_busy) или Idempotency-Key отдан другому телу (idempotency_key_reused)",
      ),
      422: err("unknown_candidate: id вне списка кандидатов"),
    },
  },
  {
    operationId: "getWorkbenchInteraction",
    role: "chat",
    credential: "required",
    method: "get",
    path: "/v1/workbench/interactions/{id}",
    tag: "workbench",
    summary: "Запрос (Interaction): статус, план, уточнения",
    description:
      "Запрос Configurator: статус (preparing … completed), версия плана, план и все уточнения с кандидатами.",
    responses: { 200: ok(Interaction), 404: err("Нет запроса") },
  },
  {
    operationId: "getSampleWorkspace",
    role: "chat",
    method: "get",
    path: "/v1/workbench/sample-workspace",
    tag: "workbench",
    summary: "Встроенный пример снапшота (его берёт сервер, если сообщение пришло без workspace)",
    description:
      "Снапшот рабочего пространства, которым сервер отвечает, если сообщение пришло без `workspace` (для примеров и тестов).",
    responses: { 200: ok(WorkspaceSnapshotSchema), 404: err("Примера нет") },
  },
];

/** The Workbench's part of the wire contract, as the gateway documents it (systems/workbench/index.ts). */
export const workbenchContract: SystemContract = {
  operations: workbenchOperations,
  schemas: workbenchSchemas,
  sseEvent: WorkbenchSseEvent,
  tags: [{ name: "workbench", description: "Configurator chat" }],
  inboxList: {
    operationId: "listWorkbenchConversations",
    path: "/v1/workbench/conversations",
    summary: "Диалоги Workbench (постранично)",
    description: "Диалоги Workbench по убыванию активности, постранично (`cursor`).",
  },
};
