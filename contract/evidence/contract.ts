import { z } from "zod";
import { userText } from "../user-text";
import { Created, err, ok, runEvents, sseUnion, type EventsOf, type Operation, type SystemContract } from "../http";
import { ConversationState, CoverageReport, FinalAnswerPackage, Premise } from "./artifacts";
import { OutcomeClass, ReasonCode } from "./reason-codes";

/**
 * The evidence workflow's wire contract (seed 002) in one place: the message body the route
 * parses, the bodies it answers, the events a turn streams, and the operations of the OpenAPI
 * document.
 */

export const EvidenceMessageBody = z.object({
  text: userText(4000, {
    empty: "Сообщение пустое.",
    tooLong: "Сообщение слишком длинное: не больше 4000 символов. Сократите его, пожалуйста.",
  }),
  debug: z.boolean().optional(),
});

export const AnswerValidation = z.object({
  ok: z.boolean(),
  issues: z.array(z.string()),
  citations: z.array(z.string()).describe("fact ids cited as [F1]"),
});
export const EvidenceModelCalls = z.object({ preparatory: z.number().int(), final: z.number().int() });

export const EvidenceFinal = z.object({
  conversationId: z.string(),
  runId: z.string(),
  turn: z.number().int(),
  outcome: OutcomeClass,
  reasonCodes: z.array(ReasonCode),
  answer: z.string(),
  package: FinalAnswerPackage,
  coverage: CoverageReport,
  premises: z.array(Premise),
  state: ConversationState,
  validation: AnswerValidation,
  modelCalls: EvidenceModelCalls,
});

// No `answer_replaced`: the Evidence answer streams only after the model's choice over the claims
// menu was resolved and rendered, so nothing it shows is ever replaced (doc/evidence.md).
export const evidenceEvents = { ...runEvents, final: EvidenceFinal };
export type EvidenceEvents = EventsOf<typeof evidenceEvents>;
// The evidence system's entry among every system's run events (contract/http.ts `SystemEvents`).
declare module "../http" {
  interface SystemEvents {
    evidence: EvidenceEvents;
  }
}
export const EvidenceSseEvent = sseUnion(evidenceEvents);

export const EvidenceConversation = z.object({
  conversationId: z.string(),
  state: ConversationState,
  last: z.object({ runId: z.string(), outcome: OutcomeClass, reasonCodes: z.array(ReasonCode) }).nullable(),
  messages: z.array(
    z.object({
      role: z.enum(["user", "assistant", "system", "tool"]),
      text: z.string(),
      meta: z.record(z.string(), z.unknown()),
      runId: z.string().nullable(),
    }),
  ),
});
export const EvidenceRun = z.object({
  runId: z.string(),
  conversationId: z.string(),
  turn: z.number().int(),
  question: z.string(),
  outcome: z.string(),
  reasonCodes: z.array(z.string()),
  artifacts: z
    .record(z.string(), z.unknown())
    .describe(
      "query_frame, premises, execution_plan, tool_runs, evidence_bundle, coverage_report, final_answer_package, validation, stages…",
    ),
});
export const EvidenceTools = z.object({
  mcp: z.string(),
  tools: z.array(z.string()),
  expected: z.array(z.string()),
  missing: z.array(z.string()),
  ready: z.boolean().describe("the server offers every tool of the contract"),
});

export const StatsQuery = z.object({
  kind: z.string().max(40).optional(),
  since: z.coerce.date().optional().describe("ISO 8601"),
});
const count = z.number().int();
export const OutcomeStats = z.object({
  total: count,
  byKind: z.array(z.object({ kind: z.string(), runs: count, completed: count, failed: count })),
  byOutcome: z.array(z.object({ kind: z.string(), outcome: z.string().nullable(), runs: count })),
  byReasonCode: z.array(z.object({ kind: z.string(), reasonCode: z.string(), runs: count })),
  byOutcomeClass: z.array(z.object({ kind: z.string(), outcomeClass: z.string(), runs: count })),
  byEscalationReason: z
    .array(z.object({ kind: z.string(), reason: z.string(), runs: count }))
    .describe("escalated turns by reason"),
  handoffs: z
    .array(
      z.object({
        reason: z
          .string()
          .describe("escalation reason at the take; not_escalated: an operator took a thread on his own"),
        taken: count,
        avgTimeToTakeMs: z.number().nullable(),
        medianTimeToTakeMs: z.number().nullable(),
        firstReplies: count,
        avgTimeToFirstReplyMs: z.number().nullable().describe("from the take to the operator's first message"),
        medianTimeToFirstReplyMs: z.number().nullable(),
        operatorMessages: count,
        released: count,
        closed: count,
        assigned: count.describe("threads nobody held given an assignee (issue 43)"),
        transferred: count.describe("held threads handed to a colleague (issue 43)"),
      }),
    )
    .describe("operators' actions by escalation reason (issue 32)"),
  byOperator: z
    .array(
      z.object({
        operator: z.string(),
        taken: count,
        firstReplies: count,
        avgTimeToFirstReplyMs: z.number().nullable().describe("from the operator's take to their first message"),
        medianTimeToFirstReplyMs: z.number().nullable(),
        messages: count,
        transfersOut: count.describe("threads this operator handed to a colleague (conversation.transferred)"),
        transfersIn: count.describe("threads a colleague handed to this operator"),
      }),
    )
    .describe("operators' actions per operator (issue 43), from the threads' event logs"),
});

/** A JSON-RPC message of the MCP Streamable HTTP transport (the demo server's business). */
export const JsonRpcMessage = z.record(z.string(), z.unknown()).describe("JSON-RPC 2.0 (MCP)");

export const evidenceSchemas: Record<string, z.ZodType> = {
  ConversationState,
  CoverageReport,
  FinalAnswerPackage,
  Premise,
  EvidenceFinal,
  EvidenceSseEvent,
  EvidenceConversation,
  EvidenceRun,
  EvidenceTools,
  OutcomeStats,
  JsonRpcMessage,
  AnswerValidation,
};

const noConversation = err("Нет диалога");
export const evidenceOperations: Operation[] = [
  {
    operationId: "createEvidenceConversation",
    role: "chat",
    credential: "issued",
    method: "post",
    path: "/v1/evidence/conversations",
    tag: "evidence",
    summary: "Новый диалог evidence workflow",
    description: "Создаёт диалог evidence workflow; возвращает `conversationId`.",
    responses: { 201: ok(Created.conversation, "Создан") },
  },
  {
    operationId: "getEvidenceConversation",
    role: "chat",
    credential: "required",
    method: "get",
    path: "/v1/evidence/conversations/{id}",
    tag: "evidence",
    summary: "Состояние разговора и сообщения",
    description: "Состояние разговора evidence workflow и его сообщения.",
    responses: { 200: ok(EvidenceConversation), 404: noConversation },
  },
  {
    operationId: "sendEvidenceMessage",
    role: "chat",
    credential: "required",
    method: "post",
    path: "/v1/evidence/conversations/{id}/messages",
    tag: "evidence",
    summary: "Вопрос → поток SSE (стадии при debug)",
    description:
      "Один ход evidence workflow: QueryFrame → план инструментов → вызовы MCP → факты → ответ только из фактов. С тем же `Idempotency-Key` повтор отдаёт тот же запуск.",
    body: EvidenceMessageBody,
    responses: {
      409: err(
        "Диалог занят другим ходом (details.reason conversation_busy) или Idempotency-Key отдан другому телу (idempotency_key_reused)",
      ),
      200: { description: "run_started, [stage…], token…, final, done", sse: EvidenceSseEvent },
      404: noConversation,
    },
  },
  {
    operationId: "getEvidenceRun",
    role: "chat",
    credential: "required",
    method: "get",
    path: "/v1/evidence/runs/{runId}",
    tag: "evidence",
    summary: "Артефакты запуска: QueryFrame … FinalAnswerPackage",
    description:
      "Все артефакты запуска по шагам (QueryFrame … FinalAnswerPackage) — что видела и вернула каждая стадия.",
    responses: { 200: ok(EvidenceRun), 404: err("Нет запуска") },
  },
  {
    operationId: "getEvidenceTools",
    method: "get",
    path: "/v1/evidence/tools",
    tag: "evidence",
    summary: "Инструменты подключённого MCP-сервера",
    description: "ready — сервер предлагает все инструменты контракта; missing — каких нет.",
    responses: { 200: ok(EvidenceTools) },
  },
  {
    operationId: "evidenceMcp",
    method: "post",
    path: "/v1/evidence/mcp",
    tag: "evidence",
    summary: "Демо MCP-сервер (Streamable HTTP, без состояния)",
    description:
      "Встроенный демонстрационный MCP-сервер (Streamable HTTP без состояния): JSON-RPC initialize, tools/list, tools/call.",
    body: JsonRpcMessage,
    responses: {
      200: {
        description: "JSON-RPC MCP (JSON или поток SSE, по Accept)",
        json: JsonRpcMessage,
        other: ["text/event-stream"],
      },
    },
  },
  {
    operationId: "getOutcomeStats",
    method: "get",
    path: "/v1/stats/outcomes",
    tag: "evidence",
    summary: "Классы исходов и коды причин всех запусков",
    description:
      "Сколько запусков каждой системы закончилось каждым классом исхода, с кодами причин — для панели качества.",
    query: StatsQuery,
    responses: { 200: ok(OutcomeStats) },
  },
];

/** The evidence workflow's part of the wire contract, as the gateway documents it (systems/evidence/index.ts). */
export const evidenceContract: SystemContract = {
  operations: evidenceOperations,
  schemas: evidenceSchemas,
  sseEvent: EvidenceSseEvent,
  tags: [{ name: "evidence", description: "Evidence workflow" }],
  inboxList: {
    operationId: "listEvidenceConversations",
    path: "/v1/evidence/conversations",
    summary: "Диалоги Evidence (постранично)",
    description: "Диалоги evidence workflow по убыванию активности, постранично (`cursor`).",
  },
};
