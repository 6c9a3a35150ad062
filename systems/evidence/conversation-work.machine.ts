import { AnswerChoice, packageOf, resolveChoice } from "./answer-choice";
import { legacyProse } from "./answer-package";
import type { CoverageReport, EvidenceBundle, FinalAnswerPackage } from "./artifacts";
import type { AnswerValidation } from "./claim-check";
import { composeWithMenu } from "./compose";
import { advanceState } from "./conversation-state";
import type { AnswerOutcome, AnswerReplacement, EvidenceContext, EvidenceEvent, TurnWork } from "./conversation-types";
import { critiqueGround, mergeCritique, narrowedByInferredRole, ruleCoverage } from "./critic-rules";
import { buildEvidence, emptyBundle } from "./evidence-builder";
import { buildFrame, resolveScope, ruleFrame, type TurnScope } from "./frame-resolve";
import type { CriticOutput } from "./model-outputs";

/**
 * The turn's work as the evidence machine's actions (conversation-setup.machine.ts) assign it:
 * pure functions of the context and the event, each a step of seed 002 §8 — the question read,
 * the evidence taken, the rules' coverage, the critic's verdict and the draft, the answer.
 */

/** Scope for a turn nobody could read: no model, and the deterministic interpreter gave up. */
const unreadable = (modelIssue: "invalid_output" | "model_unavailable" | null = null): TurnScope => ({
  intent: "unsupported",
  gate: "model_required",
  reading: null,
  counterparty: null,
  role: null,
  time: { text: null, premise: "assumed", source: "default" },
  premises: [],
  reasons: [modelIssue === "invalid_output" ? "MODEL_OUTPUT_INVALID" : "MODEL_REQUIRED"],
  clarifying_question: null,
});

export const work = (c: EvidenceContext) => c.turn!;

type Interpreted = Extract<EvidenceEvent, { type: "interpreted" }>;

/** A turn's work as the user's message starts it: nothing read, planned or found yet. */
export const newTurn = (context: EvidenceContext, e: Extract<EvidenceEvent, { type: "user.message" }>): TurnWork => ({
  requestId: e.requestId,
  text: e.text,
  turn: context.state.turn + 1,
  offline: e.offline,
  frame: null,
  scope: null,
  plan: null,
  toolRuns: [],
  bundle: emptyBundle(e.requestId),
  coverage: null,
  clarifying: null,
  draft: null,
  menu: null,
  answer: null,
  validation: null,
  rejected: null,
  modelIssue: null,
});

/** The turn once its question was read (by the model or the rules), or found unreadable. */
export function readQuestion(context: EvidenceContext, event: Interpreted): TurnWork {
  const w = work(context);
  // Nobody could read the question: the rules' frame (the question verbatim, nothing inferred) is still kept.
  if (!event.output)
    return {
      ...w,
      frame: ruleFrame(
        {
          requestId: w.requestId,
          conversationId: context.state.conversation_id,
          turn: w.turn,
          text: w.text,
          interpretedBy: "deterministic",
        },
        context.state,
      ),
      // A version-1 log names the model's failure on this event; since, the machine recorded it.
      scope: unreadable(event.modelIssue ?? w.modelIssue ?? null),
    };
  const frame = buildFrame(
    event.output,
    {
      requestId: w.requestId,
      conversationId: context.state.conversation_id,
      turn: w.turn,
      text: w.text,
      interpretedBy: event.via,
    },
    context.state,
  );
  return { ...w, frame, scope: resolveScope(frame, context.state) };
}

/** How the answer step ended: the model's choice (null: none usable) and what reached the client. */
interface AnswerEnd {
  choice?: AnswerChoice | null;
  released?: string;
  text?: string | null;
  gateIssues?: string[];
}

/** The turn's end: the model's choice rendered by the engine (else the draft), the state advanced. */
export function finishTurn(context: EvidenceContext, event: AnswerEnd): Partial<EvidenceContext> {
  const w = work(context);
  const draft = w.draft!;
  const released = event.released ?? "";
  if (!event.choice && typeof event.text === "string")
    return endTurn(context, legacyProse(w, event.text, released, event.gateIssues ?? []));
  // The same pure resolution the answer handler streamed: refused parts are left out with their
  // reason, mandatory claims added; nothing of the model's is shown as a fact.
  const resolved = event.choice ? resolveChoice(w.menu!, AnswerChoice.parse(event.choice)) : null;
  const answer: FinalAnswerPackage = resolved ? packageOf(resolved, draft.clarifying_question, "model") : draft;
  const validation: AnswerValidation | null = resolved
    ? {
        ok: resolved.issues.length === 0,
        issues: resolved.issues,
        citations: [...new Set([...answer.user_facing_answer.matchAll(/\[(F\d+)\]/g)].map((m) => m[1]!))],
      }
    : null;
  // Tokens that are not the answer (a broken-off stream) are replaced; a rendered choice never is.
  const replacement: AnswerReplacement | null =
    released && released !== answer.user_facing_answer
      ? { text: answer.user_facing_answer, reason: "model_failed", issues: [] }
      : null;
  const rejected =
    resolved && resolved.issues.length
      ? { text: JSON.stringify(event.choice), released, issues: resolved.issues }
      : !event.choice && released
        ? { text: released, released, issues: [] }
        : null;
  return endTurn(context, { answer, validation, replacement, rejected });
}

/** The turn's answer, however it was reached; the conversation state advances with it. */
function endTurn(context: EvidenceContext, end: AnswerOutcome): Partial<EvidenceContext> {
  const w = work(context);
  const { answer, validation, replacement } = end;
  const done: TurnWork = { ...w, answer, validation, rejected: end.rejected };
  const state = advanceState(context.state, {
    frame: w.frame,
    scope: w.scope,
    coverage: w.coverage!,
    bundle: w.bundle,
    clarifying_question: w.clarifying,
    text: w.text,
  });
  return {
    state,
    turn: done,
    last: {
      requestId: w.requestId,
      turn: w.turn,
      outcome: w.coverage!.outcome,
      reasonCodes: w.coverage!.reason_codes,
      answer,
      coverage: w.coverage!,
      validation,
      replacement,
    },
  };
}

/** The critic's verdict (or its failure) merged into the rules' report, and the draft composed from it. */
export function composeDraft(
  context: EvidenceContext,
  critique: CriticOutput | null,
  status: CoverageReport["critic"]["model"],
  note: string | null,
): TurnWork {
  const w = work(context);
  const coverage = mergeCritique(w.coverage!, critique, status, note, critiqueGround(w.bundle, w.plan, w.toolRuns));
  const { menu, draft } = composeWithMenu({
    scope: w.scope!,
    coverage,
    question: w.text,
    bundle: w.bundle,
    toolRuns: w.toolRuns,
    clarifying_question: w.clarifying,
    offline: w.offline,
    interpretedBy: w.frame?.interpreted_by,
  });
  // What a fault left unchecked is a mandatory claim of the menu (compose.ts): the draft and any
  // model's choice carry it.
  return { ...w, coverage, draft, menu };
}

/**
 * A party the user's words named but only a role they never stated made unique («мы должны
 * Альфе» with Альфа-Снаб and Альфа-Трейд in the directory) is an assumption of this turn's
 * answer, not a confirmed premise (§6.2.3, §11.3): its premise says so, source `tool`.
 */
function bindingPremise(scope: TurnScope, bundle: EvidenceBundle): TurnScope {
  if (!narrowedByInferredRole(bundle, scope).length) return scope;
  const premises = scope.premises.map((p) =>
    p.kind === "entity" && p.key === "counterparty" && p.status !== "assumed"
      ? { ...p, status: "assumed" as const, source: "tool" as const }
      : p,
  );
  return { ...scope, premises };
}

/** The tools' results as evidence; a party only an inferred role made unique stays an assumption. */
export function takeEvidence(context: EvidenceContext, event: Extract<EvidenceEvent, { type: "executed" }>): TurnWork {
  const w = work(context);
  const bundle = buildEvidence(w.requestId, w.plan!, event.toolRuns, event.truncated);
  return { ...w, toolRuns: event.toolRuns, bundle, scope: bindingPremise(w.scope!, bundle) };
}

/** The Coverage Critic's rules over what the turn found (or, blocked, did not look for). */
export function assess(context: EvidenceContext): TurnWork {
  const w = work(context);
  const r = ruleCoverage({
    requestId: w.requestId,
    frame: w.frame,
    scope: w.scope!,
    plan: w.plan,
    toolRuns: w.toolRuns,
    bundle: w.bundle,
  });
  return { ...w, coverage: r.coverage, clarifying: r.clarifying_question };
}
