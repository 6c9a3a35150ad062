// The artifacts every step leaves behind (seed 002 §7, §11.2). Each is a zod schema; types are
// inferred. Models only ever produce the smaller "output" shapes in model-outputs.ts; these
// are filled and checked by code.
import { z } from "zod";
import { OutcomeClass, ReasonCode } from "./reason-codes";
import { ToolName } from "./tool-contracts";

export const INTENTS = [
  "detect_open_supplier_settlements",
  "counterparty_balance",
  "unclosed_documents",
  "payment_chain",
  "unsupported",
] as const;
export const Intent = z.enum(INTENTS);
export type Intent = z.infer<typeof Intent>;

/** Domain readings of the informal word «хвосты» (and its synonyms); see glossary.ts. */
export const TERM_READINGS = ["open_settlement_balance", "overdue_settlements", "unclosed_documents"] as const;
export const TermReading = z.enum(TERM_READINGS);
export type TermReading = z.infer<typeof TermReading>;

export const AnswerShape = z.enum(["list_with_explanation", "single_value", "document_list", "explanation"]);

export const PremiseStatus = z.enum(["confirmed", "inherited", "assumed"]);
export type PremiseStatus = z.infer<typeof PremiseStatus>;

export const TimeScope = z.object({
  explicit_period: z.object({ from: z.string(), to: z.string() }).nullable(),
  as_of_date: z.string().nullable(),
  /** The words the user used («на конец марта»), parsed by resolve_period_or_asof. */
  surface: z.string().nullable(),
  needs_resolution: z.boolean(),
});

export const EntityCandidate = z.object({
  surface: z.string(),
  type: z.enum(["counterparty_group", "counterparty", "contract", "document", "informal_business_term"]),
  confidence: z.number().min(0).max(1),
  requires_domain_resolution: z.boolean().default(false),
});

export const BusinessTerm = z.object({
  surface: z.string(),
  /** null: the user did not say which reading; the resolver decides whether to assume or ask. */
  reading: TermReading.nullable(),
  explicit: z.boolean(),
});

export const Ambiguity = z.object({
  kind: z.enum(["term", "time", "scope", "entity"]),
  text: z.string(),
  /** A suggestion; the machine decides whether it really blocks (frame-resolve.ts). */
  blocking: z.boolean(),
});

export const QueryFrame = z.object({
  request_id: z.string(),
  conversation_id: z.string(),
  turn_id: z.number().int(),
  /** Exactly what the user wrote this turn — never replaced by the normalized form. */
  original_user_question: z.string(),
  /** When this message answers a clarifying question: the question it clarifies, verbatim. */
  context_question: z.string().nullable(),
  normalized_question: z.string(),
  business_intent: Intent,
  expected_answer_shape: AnswerShape,
  domain_candidates: z.array(z.string()),
  time_scope: TimeScope,
  entity_candidates: z.array(EntityCandidate),
  business_terms: z.array(BusinessTerm),
  ambiguities: z.array(Ambiguity),
  success_criteria: z.array(z.string()),
  interpreted_by: z.enum(["llm", "deterministic"]),
});
export type QueryFrame = z.infer<typeof QueryFrame>;

export const Premise = z.object({
  kind: z.enum(["time_scope", "entity", "business_term", "domain"]),
  key: z.string(),
  value: z.string(),
  label: z.string(),
  status: PremiseStatus,
  /** "interpreter": proposed by the interpreter model, not carried by the user's words (always assumed). */
  source: z.enum(["user", "previous_turn", "default", "tool", "interpreter"]),
  since_turn: z.number().int(),
});
export type Premise = z.infer<typeof Premise>;

/** A step input value: a literal, `$S2.as_of_date` (a field of an earlier step's output) or `$each.counterparty_id`. */
export const PlanStep = z.object({
  step_id: z.string().regex(/^S\d+$/),
  type: z.string(),
  tool: ToolName.nullable(),
  input: z.record(z.string(), z.unknown()),
  required: z.boolean(),
  depends_on: z.array(z.string()),
  /** `S4.rows`: run once per row of that step's output (bounded, see executor). */
  for_each: z.string().nullable(),
  /** With for_each: keep only items where `<field> <op> <number>` holds, e.g. `balance > 0`. */
  filter: z.string().nullable().default(null),
  purpose: z.string(),
});
export type PlanStep = z.infer<typeof PlanStep>;

export const ExecutionPlan = z.object({
  request_id: z.string(),
  plan_version: z.number().int(),
  goal: z.string(),
  planned_by: z.enum(["llm", "deterministic"]),
  steps: z.array(PlanStep),
  fallbacks: z.array(z.string()),
  stop_conditions: z.array(z.string()),
  /**
   * A model plan that skipped checks of the built-in plan, extended to it by the engine: the
   * added steps (`S7: purpose (tool)`). The model's route was shallower than the intent needs,
   * and the coverage says so (EVIDENCE_DEPTH_LIMIT) even though the added checks ran.
   */
  extended_by_engine: z.array(z.string()).optional(),
});
export type ExecutionPlan = z.infer<typeof ExecutionPlan>;

export const TOOL_RUN_STATUSES = [
  "success",
  "empty",
  "no_match",
  "unbound_entity",
  "ambiguous",
  "timeout",
  "tool_error",
  "schema_error",
  "invalid_output",
  "unavailable",
  "skipped",
] as const;
export const ToolRunStatus = z.enum(TOOL_RUN_STATUSES);
export type ToolRunStatus = z.infer<typeof ToolRunStatus>;

export const ToolRun = z.object({
  tool_run_id: z.string(),
  step_id: z.string(),
  tool_name: z.string(),
  status: ToolRunStatus,
  input: z.record(z.string(), z.unknown()),
  started_at: z.string(),
  finished_at: z.string(),
  duration_ms: z.number(),
  rows_returned: z.number().int(),
  error_code: ReasonCode.nullable(),
  error_message: z.string().nullable(),
  /** The tool's structured output, validated against its contract; null when there is none. */
  output: z.unknown().nullable(),
});
export type ToolRun = z.infer<typeof ToolRun>;

export const Fact = z.object({
  fact_id: z.string(),
  type: z.enum([
    "open_balance",
    "no_open_balance",
    /** A party's payment terms from the settlements register, read beside its balance: the oldest open part's due date. */
    "due_date",
    "balance",
    "unclosed_document",
    "payment",
    "document_movement",
    "closing_document",
    "entity_binding",
    "as_of_date",
  ]),
  entity: z.string(),
  entity_id: z.string().nullable(),
  value: z.union([z.number(), z.string(), z.null()]),
  currency: z.string().nullable(),
  as_of_date: z.string().nullable(),
  source_ref: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export type Fact = z.infer<typeof Fact>;

export const EntityBinding = z.object({
  surface: z.string(),
  resolved_to: z.string().nullable(),
  entity_id: z.string().nullable(),
  confidence: z.number(),
  status: z.enum(["bound", "ambiguous", "not_found"]),
  candidates: z.array(z.object({ id: z.string(), name: z.string() })),
  /** Parties the name fits as well that only the role asked for left out (§6.2.3, §11.3). */
  narrowed_by_role: z.array(z.object({ id: z.string(), name: z.string() })).default([]),
});

export const SourceRef = z.object({
  source_ref: z.string(),
  kind: z.string(),
  object_type: z.string(),
  object_id: z.string(),
  tool_run_id: z.string(),
});

export const Conflict = z.object({
  conflict_id: z.string(),
  entity: z.string(),
  entity_id: z.string().nullable(),
  description: z.string(),
  fact_ids: z.array(z.string()),
});

export const Gap = z.object({ step_id: z.string(), tool: z.string(), what: z.string(), reason_code: ReasonCode });

export const EvidenceBundle = z.object({
  request_id: z.string(),
  facts: z.array(Fact),
  entity_bindings: z.array(EntityBinding),
  source_refs: z.array(SourceRef),
  documents: z.array(z.record(z.string(), z.unknown())),
  conflicts: z.array(Conflict),
  not_found: z.array(Gap),
  execution_errors: z.array(Gap.extend({ message: z.string() })),
  /** Steps that were cut by the execution budget (for_each over many rows). */
  truncated: z.array(z.object({ step_id: z.string(), done: z.number(), total: z.number() })),
  /**
   * Strings from tool data that did not look like what they stand for (a name with an instruction
   * planted in it, markup, a link) or differ from the directory's entry: shown as a placeholder,
   * the raw value kept only in the tool run (systems/evidence/tool-strings.ts).
   */
  flagged_strings: z
    .array(
      z.object({
        tool: z.string(),
        step_id: z.string(),
        field: z.string(),
        id: z.string().nullable(),
        reason: z.enum(["markup", "link", "length", "sentence", "instruction", "directory_mismatch"]),
      }),
    )
    .optional(),
});
export type EvidenceBundle = z.infer<typeof EvidenceBundle>;

export const WhyPartial = z.object({ reason_code: ReasonCode, message: z.string() });

export const CoverageReport = z.object({
  request_id: z.string(),
  answerability: z.enum(["full", "partial", "insufficient"]),
  covered_points: z.array(z.string()),
  uncovered_points: z.array(z.string()),
  why_partial: z.array(WhyPartial),
  next_best_actions: z.array(z.string()),
  reason_codes: z.array(ReasonCode),
  outcome: OutcomeClass,
  critic: z.object({
    rules: z.literal(true),
    model: z.enum(["used", "skipped", "failed", "offline"]),
    note: z.string().nullable(),
  }),
  /**
   * What the answer must show whatever a model writes: the checks a tool fault left undone (as
   * worded in `why_partial` / `uncovered_points`) and the next step they call for. Neither the
   * critic nor the answer model can remove them: each is a mandatory claim of the claims menu
   * (systems/evidence/compose.ts).
   */
  mandatory: z.object({ not_established: z.array(z.string()), next_step: z.array(z.string()) }).optional(),
});
export type CoverageReport = z.infer<typeof CoverageReport>;

export const Claim = z.object({
  claim_id: z.string(),
  text: z.string(),
  kind: z.enum(["evidence", "inference", "unknown"]),
  evidence_ids: z.array(z.string()),
});
export type Claim = z.infer<typeof Claim>;

export const FinalAnswerPackage = z.object({
  short_answer: z.string(),
  user_facing_answer: z.string(),
  /** The five blocks of §9.1, in order. */
  blocks: z.object({
    direct: z.string(),
    checked: z.array(z.string()),
    found: z.array(z.string()),
    not_established: z.array(z.string()),
    next_step: z.array(z.string()),
  }),
  evidence_summary: z.array(z.string()),
  limitations: z.array(z.string()),
  clarifying_question: z.string().nullable(),
  claims: z.array(Claim),
  composed_by: z.enum(["model", "deterministic"]),
});
export type FinalAnswerPackage = z.infer<typeof FinalAnswerPackage>;

export const StateEntity = z.object({
  type: z.enum(["counterparty_group", "counterparty"]),
  surface: z.string(),
  value: z.string(),
  entity_id: z.string().nullable(),
  premise: PremiseStatus,
  since_turn: z.number().int(),
});
export const StateTerm = z.object({
  surface: z.string(),
  resolved_to: TermReading,
  confidence: z.number(),
  premise: PremiseStatus,
  since_turn: z.number().int(),
});

export const ConversationState = z.object({
  conversation_id: z.string(),
  turn: z.number().int(),
  active_domain: z.string().nullable(),
  active_intent: Intent.nullable(),
  active_entities: z.array(StateEntity),
  active_time_scope: z
    .object({
      as_of_date: z.string(),
      surface: z.string().nullable(),
      premise: PremiseStatus,
      since_turn: z.number().int(),
    })
    .nullable(),
  resolved_business_terms: z.array(StateTerm),
  last_clarifications: z.array(z.object({ turn: z.number().int(), question: z.string(), answered: z.boolean() })),
  open_ambiguities: z.array(z.string()),
  /** The question a clarification was asked about, kept verbatim until it is answered. */
  pending_question: z.string().nullable(),
  pending_intent: Intent.nullable(),
  last_evidence_refs: z.array(z.string()),
});
export type ConversationState = z.infer<typeof ConversationState>;

export function emptyConversationState(conversationId: string): ConversationState {
  return {
    conversation_id: conversationId,
    turn: 0,
    active_domain: null,
    active_intent: null,
    active_entities: [],
    active_time_scope: null,
    resolved_business_terms: [],
    last_clarifications: [],
    open_ambiguities: [],
    pending_question: null,
    pending_intent: null,
    last_evidence_refs: [],
  };
}
