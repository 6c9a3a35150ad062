// The shapes the models are asked for (strict JSON, json_schema response_format). Code fills
// ids, the original question and everything the model must not decide.
import { z } from "zod";
import { Ambiguity, AnswerShape, BusinessTerm, EntityCandidate, Intent, PlanStep, TimeScope } from "./artifacts";
import { ReasonCode } from "./reason-codes";

export const InterpreterOutput = z.object({
  normalized_question: z.string().min(1),
  business_intent: Intent,
  expected_answer_shape: AnswerShape,
  domain_candidates: z.array(z.string()).default([]),
  time_scope: TimeScope,
  entity_candidates: z.array(EntityCandidate).default([]),
  business_terms: z.array(BusinessTerm).default([]),
  ambiguities: z.array(Ambiguity).default([]),
  success_criteria: z.array(z.string()).default([]),
});
export type InterpreterOutput = z.infer<typeof InterpreterOutput>;

export const PlannerOutput = z.object({
  goal: z.string().min(1),
  steps: z.array(PlanStep).min(1).max(12),
  fallbacks: z.array(z.string()).default([]),
  stop_conditions: z.array(z.string()).default([]),
});
export type PlannerOutput = z.infer<typeof PlannerOutput>;

/**
 * The critic may only add depth gaps: it never removes what the rules found, and data-backed
 * codes (conflicts, missing documents, timeouts) come from the evidence alone. The code of a gap
 * follows from its kind (critic-kinds.ts), never from the model.
 */
export const CRITIC_ADDABLE = ["PARTIAL_MATCH_IN_1C", "INSUFFICIENT_DOCUMENT_DEPTH", "EVIDENCE_DEPTH_LIMIT"] as const;

/** Kinds of gaps the critic may propose; the engine writes each one's sentence (critic-kinds.ts). */
export const CRITIC_GAP_KINDS = [
  "documents_not_checked",
  "document_to_request",
  "payments_not_reconciled",
  "step_incomplete",
  "partial_match",
] as const;
/** Kinds of next actions the critic may propose. */
export const CRITIC_ACTION_KINDS = [
  "request_documents",
  "check_posting",
  "retry_step",
  "run_deep_check",
  "confirm_period",
  "confirm_counterparty",
] as const;

/** Exactly one of: a fact id of this run, a plan step id, a tool that failed in this run, the run's scope. */
export const CriticRef = z.object({
  fact_id: z.string().nullable().default(null),
  step_id: z.string().nullable().default(null),
  tool: z.string().nullable().default(null),
  scope: z.enum(["party", "period"]).nullable().default(null),
});
export type CriticRef = z.infer<typeof CriticRef>;

export const CriticGap = z.object({ kind: z.enum(CRITIC_GAP_KINDS), ref: CriticRef });
export type CriticGap = z.infer<typeof CriticGap>;
export const CriticAction = z.object({ kind: z.enum(CRITIC_ACTION_KINDS), ref: CriticRef });
export type CriticAction = z.infer<typeof CriticAction>;

export const CriticOutput = z
  .object({
    gaps: z.array(CriticGap).optional(),
    actions: z.array(CriticAction).optional(),
    // Free text a model may still write (the shape of prompt version 2): accepted so the call is
    // not wasted, kept in the engineering trace, never shown and never a ground for a gap.
    covered_points: z.array(z.string()).optional(),
    uncovered_points: z.array(z.string()).optional(),
    extra_reasons: z.array(z.object({ reason_code: ReasonCode, message: z.string() })).optional(),
    next_best_actions: z.array(z.string()).optional(),
    note: z.string().optional(),
  })
  // An empty `{}` is no verdict at all, not "nothing uncovered": the lists must be there.
  .refine((o) => (o.gaps && o.actions) || (o.uncovered_points && o.next_best_actions), {
    message: "нужны списки gaps и actions",
  });
export type CriticOutput = z.infer<typeof CriticOutput>;
