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
 * The critic may only add depth gaps from this set: it never removes what the rules found, and
 * data-backed codes (conflicts, missing documents, timeouts) come from the evidence alone.
 */
export const CRITIC_ADDABLE = ["PARTIAL_MATCH_IN_1C", "INSUFFICIENT_DOCUMENT_DEPTH", "EVIDENCE_DEPTH_LIMIT"] as const;

export const CriticOutput = z.object({
  covered_points: z.array(z.string()).default([]),
  // Required, so an empty `{}` is not mistaken for "nothing uncovered".
  uncovered_points: z.array(z.string()),
  extra_reasons: z.array(z.object({ reason_code: ReasonCode, message: z.string() })).default([]),
  next_best_actions: z.array(z.string()),
});
export type CriticOutput = z.infer<typeof CriticOutput>;
