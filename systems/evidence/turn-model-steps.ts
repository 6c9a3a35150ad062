// The four model modes (seed 002 §13.3) on the shared client: Interpreter, Planner and Critic
// are structured calls on role PLANNER, the Answer (a choice over the claims menu) on role ANSWER. Every structured
// answer is validated by schema (and by the rules of its step) with exactly one repair retry;
// after that the step reports its failure (`failures`) and the conversation machine takes the
// deterministic way — a model never fails the run.
import type { z } from "zod";
import type { ChatMessage, Llm, Role } from "../../llm/client";
import { ANSWER_PROMPT, CRITIC_PROMPT, INTERPRETER_PROMPT, PLANNER_PROMPT } from "./prompts";
import { manifestOf, type PromptManifestEntry } from "../../llm/define-prompt";
import type { ConversationState, CoverageReport, EvidenceBundle, QueryFrame } from "./artifacts";
import type { TurnScope } from "./frame-resolve";
import { CriticOutput, InterpreterOutput, PlannerOutput } from "./model-outputs";
import { describeTool, TOOL_NAMES } from "./tool-contracts";
import { AnswerChoice, menuForModel } from "./answer-choice";
import type { ClaimsMenu } from "./claims-menu";

export const STRUCTURED_ROLE: Role = "planner";
export const ANSWER_ROLE: Role = "answer";

export interface StepCall<T> {
  value: T | null;
  calls: number;
  /** Why the model's answer was not used (schema or rule violations, endpoint errors). */
  issues: string[];
  /** Each failed attempt's code: the client's error code, or `rule_violation` (the step's rules refused it). */
  failures: string[];
  prompt: PromptManifestEntry;
  repaired: boolean;
}

interface CallOpts {
  signal?: AbortSignal;
}

export async function structuredWithRepair<S extends z.ZodType>(
  llm: Llm,
  prompt: { id: string; version: string; sha256: string; text: string },
  input: unknown,
  schema: S,
  name: string,
  check: (v: z.infer<S>) => string[],
  o: CallOpts,
  role: Role = STRUCTURED_ROLE,
): Promise<StepCall<z.infer<S>>> {
  // Every attempt the client makes (its own retries included) is a call.
  const count = { calls: 0 };
  const issues: string[] = [];
  const failures: string[] = [];
  const messages: ChatMessage[] = [
    { role: "system", content: prompt.text },
    { role: "user", content: JSON.stringify(input) },
  ];
  for (let attempt = 0; attempt < 2; attempt++) {
    const r = await llm.structured(role, messages, schema, name, {
      signal: o.signal,
      onAttempt: () => void count.calls++,
    });
    if (!r.ok) {
      issues.push(`${r.error.code}: ${r.error.message.slice(0, 300)}`);
      failures.push(r.error.code);
      if (r.error.code !== "invalid_output") break; // an unreachable endpoint gets no repair prompt
      messages.push({
        role: "user",
        content: `Ответ не прошёл проверку схемы ${name}: ${r.error.message.slice(0, 300)}. Верни исправленный JSON строго по схеме, без пояснений.`,
      });
      continue;
    }
    const problems = check(r.value);
    if (problems.length === 0)
      return {
        value: r.value,
        calls: count.calls,
        issues,
        failures,
        prompt: manifestOf(prompt as never),
        repaired: attempt > 0,
      };
    issues.push(...problems);
    failures.push("rule_violation");
    messages.push(
      { role: "assistant", content: JSON.stringify(r.value) },
      { role: "user", content: `План/ответ нарушает правила: ${problems.join("; ")}. Исправь и верни только JSON.` },
    );
  }
  return { value: null, calls: count.calls, issues, failures, prompt: manifestOf(prompt as never), repaired: false };
}

/** What the interpreter sees of the conversation: compact extracts, not the transcript (§11.3). */
export function stateDigest(s: ConversationState) {
  return {
    active_intent: s.active_intent,
    active_entities: s.active_entities.map((e) => ({ value: e.value, premise: e.premise })),
    active_time_scope: s.active_time_scope,
    resolved_business_terms: s.resolved_business_terms,
    pending_question: s.pending_question,
    last_clarification: s.last_clarifications.at(-1) ?? null,
  };
}

export function interpretWithModel(llm: Llm, text: string, state: ConversationState, o: CallOpts) {
  return structuredWithRepair(
    llm,
    INTERPRETER_PROMPT,
    { question: text, context: stateDigest(state) },
    InterpreterOutput,
    "evidence_query_frame",
    () => [],
    o,
  );
}

export function planWithModel(
  llm: Llm,
  frame: QueryFrame,
  scope: TurnScope,
  check: (p: PlannerOutput) => string[],
  o: CallOpts,
) {
  const catalog = TOOL_NAMES.map((n) => ({ name: n, description: describeTool(n) }));
  const input = {
    query_frame: frame,
    trusted_scope: {
      intent: scope.intent,
      reading: scope.reading,
      counterparty: scope.counterparty?.surface ?? null,
      date_words: scope.time.text,
    },
    tools: catalog,
  };
  return structuredWithRepair(llm, PLANNER_PROMPT, input, PlannerOutput, "evidence_execution_plan", check, o);
}

/** Evidence compaction (§ rule 3): facts, conflicts and gaps only — never raw tool output. */
export function compactEvidence(b: EvidenceBundle) {
  return {
    facts: b.facts.map((f) => ({
      id: f.fact_id,
      type: f.type,
      entity: f.entity,
      value: f.value,
      currency: f.currency,
      as_of: f.as_of_date,
      details: f.details,
    })),
    conflicts: b.conflicts.map((c) => ({
      id: c.conflict_id,
      entity: c.entity,
      description: c.description,
      facts: c.fact_ids,
    })),
    not_found: b.not_found.map((g) => ({ what: g.what, reason: g.reason_code })),
    errors: b.execution_errors.map((e) => ({ tool: e.tool, reason: e.reason_code, message: e.message.slice(0, 200) })),
  };
}

export function criticWithModel(
  llm: Llm,
  frame: QueryFrame | null,
  bundle: EvidenceBundle,
  coverage: CoverageReport,
  o: CallOpts,
) {
  const input = {
    query_frame: frame,
    evidence: compactEvidence(bundle),
    rules_report: {
      outcome: coverage.outcome,
      covered: coverage.covered_points,
      uncovered: coverage.uncovered_points,
      reasons: coverage.why_partial,
    },
  };
  return structuredWithRepair(llm, CRITIC_PROMPT, input, CriticOutput, "evidence_coverage_critique", () => [], o);
}

/** The answer step's input: the question, its premises, the coverage and the claims menu to choose from. */
export function answerInput(
  frame: QueryFrame | null,
  text: string,
  scope: TurnScope | null,
  coverage: CoverageReport,
  menu: ClaimsMenu,
) {
  return {
    original_question: text,
    normalized_question: frame?.normalized_question ?? null,
    premises: scope?.premises.map((p) => ({ what: p.label, value: p.value, status: p.status })) ?? [],
    coverage: { outcome: coverage.outcome, answerability: coverage.answerability, reasons: coverage.reason_codes },
    menu: menuForModel(menu),
    engine_choice: menu.engine,
  };
}

/** The answer model chooses claims (structured output, role ANSWER); the engine states them. */
export function chooseAnswer(llm: Llm, input: ReturnType<typeof answerInput>, o: CallOpts) {
  return structuredWithRepair(
    llm,
    ANSWER_PROMPT,
    input,
    AnswerChoice,
    "evidence_answer_choice",
    () => [],
    o,
    ANSWER_ROLE,
  );
}

export const EVIDENCE_PROMPTS = [INTERPRETER_PROMPT, PLANNER_PROMPT, CRITIC_PROMPT, ANSWER_PROMPT].map((p) =>
  manifestOf(p),
);
