// ConversationState between turns (seed 002 §11): what the next turn inherits. Only compact,
// relevant extracts; every premise keeps its mark, and an assumption stays an assumption until
// the user states it (§11.3, §15.4).
import type { ConversationState, CoverageReport, EvidenceBundle, QueryFrame, TermReading } from "./artifacts";
import type { TurnScope } from "./frame-resolve";
import { INTENT_INFO } from "./glossary";
import { narrowedByInferredRole } from "./critic-rules";

export interface TurnResultForState {
  frame: QueryFrame | null;
  scope: TurnScope | null;
  coverage: CoverageReport;
  bundle: EvidenceBundle;
  clarifying_question: string | null;
  text: string;
}

export function advanceState(prev: ConversationState, t: TurnResultForState): ConversationState {
  const turn = prev.turn + 1;
  const s: ConversationState = { ...prev, turn };
  const scope = t.scope;
  const blocked = t.coverage.outcome === "BLOCKED_BY_AMBIGUITY";
  if (!scope || scope.gate === "misrouted" || scope.gate === "model_required") {
    // Off-topic or unreadable turns leave the domain context as it was: no drift.
    return { ...s, last_clarifications: prev.last_clarifications.slice(-3) };
  }
  s.active_intent = scope.intent;
  s.active_domain = scope.intent === "unsupported" ? prev.active_domain : INTENT_INFO[scope.intent].domain;

  const dateFact = t.bundle.facts.find((f) => f.type === "as_of_date");
  const timePremise = scope.premises.find((p) => p.kind === "time_scope");
  if (dateFact && timePremise)
    s.active_time_scope = {
      as_of_date: String(dateFact.value),
      surface: scope.time.text,
      premise: timePremise.status,
      since_turn: timePremise.since_turn,
    };

  const bound = t.bundle.entity_bindings.find((b) => b.status === "bound");
  const cpPremise = scope.premises.find((p) => p.key === "counterparty");
  if (bound && cpPremise) {
    s.active_entities = [
      ...prev.active_entities.filter((e) => e.type !== "counterparty"),
      {
        type: "counterparty",
        surface: bound.surface,
        value: bound.resolved_to ?? bound.surface,
        entity_id: bound.entity_id,
        // bound only through a role the user never stated: an assumption, whatever the words
        premise: narrowedByInferredRole(t.bundle, scope).length ? "assumed" : cpPremise.status,
        since_turn: cpPremise.since_turn,
      },
    ];
  } else if (t.bundle.entity_bindings.some((b) => b.status !== "bound")) {
    // A name that did not bind must not linger as the active counterparty.
    s.active_entities = prev.active_entities.filter((e) => e.type !== "counterparty");
  }
  const group = scope.premises.find((p) => p.key === "counterparty_group");
  if (group) {
    s.active_entities = [
      ...s.active_entities.filter((e) => e.type !== "counterparty_group"),
      {
        type: "counterparty_group",
        surface: "поставщики",
        value: "supplier",
        entity_id: null,
        premise: group.status,
        since_turn: group.since_turn,
      },
    ];
  }

  const term = scope.premises.find((p) => p.kind === "business_term");
  if (term)
    s.resolved_business_terms = [
      {
        surface: term.key,
        resolved_to: term.value as TermReading,
        confidence: term.status === "assumed" ? 0.6 : 0.95,
        premise: term.status,
        since_turn: term.since_turn,
      },
    ];

  if (blocked && t.clarifying_question) {
    s.pending_question = prev.pending_question ?? t.text;
    s.pending_intent = scope.intent;
    s.last_clarifications = [
      ...prev.last_clarifications,
      { turn, question: t.clarifying_question, answered: false },
    ].slice(-3);
  } else {
    s.pending_question = null;
    s.pending_intent = null;
    s.last_clarifications = prev.last_clarifications.map((c) => ({ ...c, answered: true })).slice(-3);
  }
  s.open_ambiguities = t.coverage.uncovered_points.slice(0, 5);
  s.last_evidence_refs = t.bundle.facts
    .map((f) => f.source_ref)
    .filter((v, i, a) => a.indexOf(v) === i)
    .slice(0, 20);
  return s;
}
