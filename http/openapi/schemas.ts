import { z } from "zod";
import { BranchCode, BranchConfig, ClinicState, RouterConfig, StepGraph, StepSpec } from "../../systems/clinic/types";
import { errorStatus } from "../../driver/errors";
import { CandidateSchema, PlanSchema, WorkspaceSnapshotSchema } from "../../systems/workbench/types";

/**
 * The wire shapes of CONTRACT.md as zod schemas, for the OpenAPI document. Domain schemas are
 * imported from where the code validates with them (clinic/types, workbench/types); request
 * bodies the feature routes keep private are restated here to the letter of the contract.
 */

export const ErrorBody = z.object({
  error: z.object({ code: z.enum(Object.keys(errorStatus) as [keyof typeof errorStatus, ...(keyof typeof errorStatus)[]]), message: z.string(), details: z.unknown().optional() }),
});

// ---- SSE events (CONTRACT §2) ----
export const RunStarted = z.object({ runId: z.string(), conversationId: z.string().optional(), threadId: z.string().optional(), interactionId: z.string().optional(), planVersion: z.number().int().optional() });
export const StageEvent = z.object({ stageId: z.string().regex(/^\d\d$/), name: z.string(), status: z.enum(["ok", "skipped", "failed"]), durationMs: z.number(), data: z.unknown() });
export const RouterDecision = z.object({ intent: BranchCode });
export const TokenEvent = z.object({ delta: z.string() });
/** doc/streaming.md: the client discards every `token` of this run and shows `text`; `final` follows. */
export const AnswerReplaced = z.object({
  text: z.string().describe("the authoritative answer; equals final's answer text"),
  reason: z.enum(["validation_failed", "model_failed"]).describe("validation_failed: a checker rejected the model's text; model_failed: the model's stream ended unusable after text was released"),
  issues: z.array(z.string()).describe("why, one issue per string (`code` or `code: detail`)"),
});
export const ErrorEvent = z.object({ code: z.string(), message: z.string() });
export const DoneEvent = z.object({});

const sse = (name: string, data: z.ZodType) => z.object({ event: z.literal(name), id: z.string().describe("increasing within the run"), data });

// ---- clinic (CONTRACT §5) ----
export const ClinicMessageBody = z.object({ text: z.string().min(1).max(4000), debug: z.boolean().optional().describe("true → `stage` events (RAG fragments, the assembled system prompt)") });
export const ClinicFinal = z.object({ reply: z.string(), state: ClinicState, events: z.array(z.string()).describe("sticky, soft_insertion, handoff, resumed, guard_blocked:<guard>, transition_rejected, loop_guard, escalated, model_unavailable, red_flag") });
export const ClinicThread = z.object({ threadId: z.string(), state: ClinicState, messages: z.array(z.object({ role: z.enum(["user", "assistant", "system", "tool"]), text: z.string(), meta: z.record(z.string(), z.unknown()) })) });
export const ClinicSseEvent = z.discriminatedUnion("event", [
  sse("run_started", RunStarted),
  sse("stage", StageEvent),
  sse("router_decision", RouterDecision),
  sse("token", TokenEvent),
  sse("final", ClinicFinal),
  sse("error", ErrorEvent),
  sse("done", DoneEvent),
]);
export const BranchSettings = z.object({ versions: z.string(), branches: z.array(BranchConfig), stepGraphs: z.array(StepGraph), router: RouterConfig.describe("the `_router` system branch's active version (edit via /v1/clinic/branches/_router/versions)") });
export const BranchVersionRow = z.object({ code: BranchCode, version: z.number().int(), active: z.boolean(), config: z.record(z.string(), z.unknown()), createdAt: z.string() });
export const StepGraphVersionRow = z.object({ branch: z.string(), version: z.number().int(), active: z.boolean(), graph: z.record(z.string(), z.unknown()), createdAt: z.string() });
export const NewBranchVersion = z.object({ config: BranchConfig.partial().describe("fields to change; the rest is taken from the active version"), activate: z.boolean().default(true) });
export const NewStepGraph = z.object({
  graph: z.object({ initial: z.string().optional(), steps: z.array(StepSpec).min(1) }).describe("`branch` comes from the URL, `version` from the store; allowed_next must name existing steps"),
  activate: z.boolean().default(true),
});
export const KbDocumentBody = z.object({ id: z.string().regex(/^[\w.-]{1,128}$/).optional(), title: z.string().min(1).max(300), text: z.string().min(1), branch: BranchCode.nullable().optional() });
export const KbDocument = z.object({ id: z.string(), title: z.string(), branch: z.string().nullable(), version: z.number().int(), chunkCount: z.number().int(), updatedAt: z.string() });
export const KbChunk = z.object({ ord: z.number().int(), heading: z.string(), text: z.string() });
export const KbFragment = z.object({ docId: z.string(), heading: z.string(), text: z.string(), score: z.number() });

// ---- workbench (CONTRACT §3) ----
export const WorkbenchMessageBody = z.object({
  text: z.string().min(1).max(10_000),
  workspace: WorkspaceSnapshotSchema.optional().describe("the trusted workspace snapshot (ExportLive); omitted → the bundled sample"),
  interactionId: z.string().optional(),
  replyToClarificationId: z.string().optional(),
  selectedCandidateId: z.string().optional().describe("must be a candidateId of that clarification's candidate snapshot"),
  basePlanVersion: z.number().int().positive().optional(),
  debug: z.boolean().optional(),
});
export const ClarificationRequired = z.object({ id: z.string(), interactionId: z.string(), taskId: z.string(), slot: z.string(), question: z.string(), candidates: z.array(CandidateSchema) });
export const WorkbenchFinal = z.object({
  interactionId: z.string(),
  status: z.string(),
  answer: z.string(),
  entityCitations: z.array(z.string()),
  validation: z.object({ ok: z.boolean(), issues: z.array(z.unknown()) }),
  modelCalls: z.object({ preparatory: z.number().int(), final: z.number().int() }),
});
export const WorkbenchSseEvent = z.discriminatedUnion("event", [
  sse("run_started", RunStarted),
  sse("stage", StageEvent),
  sse("clarification_required", ClarificationRequired),
  sse("token", TokenEvent),
  sse("answer_replaced", AnswerReplaced),
  sse("final", WorkbenchFinal),
  sse("error", ErrorEvent),
  sse("done", DoneEvent),
]);
export const Interaction = z.object({
  id: z.string(),
  conversationId: z.string(),
  status: z.enum(["preparing", "awaiting_clarification", "answering", "completed", "superseded", "cancelled", "failed"]),
  planVersion: z.number().int(),
  plan: PlanSchema.nullable(),
  clarifications: z.array(ClarificationRequired.omit({ interactionId: true }).extend({ status: z.string() })),
});

// ---- machines ----
export const MachineSummary = z.object({ id: z.string(), title: z.string(), description: z.string(), conversationKind: z.enum(["clinic", "workbench", "evidence"]), machineId: z.string(), states: z.number().int(), transitions: z.number().int() });

export const schemaNames: [string, z.ZodType][] = [
  ["Error", ErrorBody],
  ["ClinicState", ClinicState],
  ["BranchConfig", BranchConfig],
  ["StepGraph", StepGraph],
  ["ClinicMessageBody", ClinicMessageBody],
  ["ClinicFinal", ClinicFinal],
  ["ClinicThread", ClinicThread],
  ["ClinicSseEvent", ClinicSseEvent],
  ["BranchSettings", BranchSettings],
  ["BranchVersionRow", BranchVersionRow],
  ["StepGraphVersionRow", StepGraphVersionRow],
  ["NewBranchVersion", NewBranchVersion],
  ["NewStepGraph", NewStepGraph],
  ["KbDocumentBody", KbDocumentBody],
  ["KbDocument", KbDocument],
  ["KbChunk", KbChunk],
  ["KbFragment", KbFragment],
  ["WorkspaceSnapshot", WorkspaceSnapshotSchema],
  ["Plan", PlanSchema],
  ["Candidate", CandidateSchema],
  ["WorkbenchMessageBody", WorkbenchMessageBody],
  ["ClarificationRequired", ClarificationRequired],
  ["WorkbenchFinal", WorkbenchFinal],
  ["WorkbenchSseEvent", WorkbenchSseEvent],
  ["Interaction", Interaction],
  ["MachineSummary", MachineSummary],
  ["RunStarted", RunStarted],
  ["StageEvent", StageEvent],
  ["AnswerReplaced", AnswerReplaced],
];
