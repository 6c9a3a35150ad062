// Turns an interpretation into this turn's trusted scope: the QueryFrame (original question
// kept verbatim), what is inherited from ConversationState, which premises are confirmed,
// inherited or assumed, and whether the turn may proceed. The model only suggests; the rules
// here decide (an assumption is never promoted to a fact without the user saying so).
import type { ConversationState, Intent, Premise, PremiseStatus, QueryFrame, TermReading } from "./artifacts";
import { asksDueDate } from "./due-question";
import { DEFAULT_READING, detectReading, INTENT_INFO, READINGS } from "./glossary";
import type { InterpreterOutput } from "./model-outputs";
import type { ReasonCode } from "./reason-codes";
import { askedRole, carriedBy, userDateSurface } from "./user-words";

export type Gate = "proceed" | "clarify" | "misrouted" | "model_required";

export interface TurnScope {
  intent: Intent;
  gate: Gate;
  reading: TermReading | null;
  counterparty: { surface: string; entity_id: string | null; premise: PremiseStatus } | null;
  /** Whose settlements the user asks about: ours to a supplier, or a customer's to us. */
  role: "supplier" | "customer" | null;
  /** The user's own words name the role (not inferred from the intent): only then may a role narrow a name. */
  role_said?: boolean;
  /** What resolve_period_or_asof is asked to read; null → the base's working date. */
  time: { text: string | null; premise: PremiseStatus; source: "user" | "previous_turn" | "default" | "interpreter" };
  premises: Premise[];
  reasons: ReasonCode[];
  clarifying_question: string | null;
  /** What the interpreter model proposed that the user's words do not carry (kept as assumptions; for the trace). */
  not_from_user?: string[];
  /** The user's words ask for a due date («До какого числа нужно оплатить …?»): the plan reads the payment terms. */
  asks_due_date?: boolean;
}

export interface FrameMeta {
  requestId: string;
  conversationId: string;
  turn: number;
  text: string;
  interpretedBy: "llm" | "deterministic";
}

/** What a frame says of where the question stands, however it was read: the turn, its words and the question pending before it. */
const frameHead = (m: FrameMeta, state: ConversationState) => ({
  request_id: m.requestId,
  conversation_id: m.conversationId,
  turn_id: m.turn,
  original_user_question: m.text,
  context_question: state.pending_question,
});

export function buildFrame(out: InterpreterOutput, m: FrameMeta, state: ConversationState): QueryFrame {
  return {
    ...frameHead(m, state),
    normalized_question: out.normalized_question,
    business_intent: out.business_intent,
    expected_answer_shape: out.expected_answer_shape,
    domain_candidates: out.domain_candidates,
    time_scope: out.time_scope,
    entity_candidates: out.entity_candidates,
    business_terms: out.business_terms,
    ambiguities: out.ambiguities,
    success_criteria: out.success_criteria.length
      ? out.success_criteria
      : out.business_intent === "unsupported"
        ? []
        : INTENT_INFO[out.business_intent].criteria,
    interpreted_by: m.interpretedBy,
  };
}

/** The frame the rules can build when no interpreter read the question: verbatim, nothing inferred. */
export function ruleFrame(m: FrameMeta, state: ConversationState): QueryFrame {
  return {
    ...frameHead(m, state),
    normalized_question: m.text,
    business_intent: "unsupported",
    expected_answer_shape: "explanation",
    domain_candidates: [],
    time_scope: { explicit_period: null, as_of_date: null, surface: null, needs_resolution: false },
    entity_candidates: [],
    business_terms: [],
    ambiguities: [
      { kind: "scope", text: "Вопрос не разобран: ни модель, ни правила не определили, о чём он", blocking: true },
    ],
    success_criteria: [],
    interpreted_by: m.interpretedBy,
  };
}

/** A premise carried over keeps "assumed" if it was assumed: inheritance never upgrades it. */
const carried = (s: PremiseStatus): PremiseStatus => (s === "assumed" ? "assumed" : "inherited");

export function resolveScope(frame: QueryFrame, state: ConversationState): TurnScope {
  const turn = frame.turn_id;
  const premises: Premise[] = [];
  const reasons: ReasonCode[] = [];
  const intent = frame.business_intent;
  const base = {
    intent,
    reading: null,
    counterparty: null,
    role: null,
    premises,
    reasons,
    clarifying_question: null,
  } as const;
  if (intent === "unsupported") {
    return { ...base, gate: "misrouted", time: { text: null, premise: "assumed", source: "default" } };
  }

  // Only the user's own words confirm a premise: this message, or the question it clarifies.
  // What the interpreter model adds on its own stays an assumption (§11.3).
  const userTexts = [frame.original_user_question, frame.context_question];
  const dropped: string[] = [];

  // Time: the user's words, else the previous turn's date, else the working date — marked.
  let time: TurnScope["time"];
  const userDate = userDateSurface(userTexts);
  const modelDate =
    frame.time_scope.surface ?? frame.time_scope.as_of_date ?? frame.time_scope.explicit_period?.to ?? null;
  const modelDateCarried = !!modelDate && carriedBy(modelDate, userTexts);
  const echoesPrevious =
    !!modelDate &&
    !!state.active_time_scope &&
    (modelDate === state.active_time_scope.as_of_date || modelDate === state.active_time_scope.surface);
  // A date the user confirmed earlier (or the engine resolved from their words) stands until the
  // user names another: the model may propose a date, never replace a confirmed one (§11.3).
  const confirmedDate = !!state.active_time_scope && state.active_time_scope.premise !== "assumed";
  if (userDate) time = { text: userDate, premise: "confirmed", source: "user" };
  else if (modelDateCarried) time = { text: modelDate, premise: "confirmed", source: "user" };
  else if (modelDate && !echoesPrevious && confirmedDate) {
    time = {
      text: state.active_time_scope!.as_of_date,
      premise: carried(state.active_time_scope!.premise),
      source: "previous_turn",
    };
    dropped.push(
      `дата «${modelDate}» предложена моделью вместо подтверждённой ранее — оставлена подтверждённая ${state.active_time_scope!.as_of_date}`,
    );
  } else if (modelDate && !echoesPrevious) {
    time = { text: modelDate, premise: "assumed", source: "interpreter" };
    dropped.push(`дата «${modelDate}» предложена моделью, в словах пользователя её нет`);
  } else if (state.active_time_scope)
    time = {
      text: state.active_time_scope.as_of_date,
      premise: carried(state.active_time_scope.premise),
      source: "previous_turn",
    };
  else time = { text: null, premise: "assumed", source: "default" };
  premises.push({
    kind: "time_scope",
    key: "as_of_date",
    value: time.text ?? "рабочая дата базы",
    label: "Дата отсечения",
    status: time.premise,
    source:
      time.source === "user"
        ? "user"
        : time.source === "previous_turn"
          ? "previous_turn"
          : time.source === "interpreter"
            ? "interpreter"
            : "default",
    since_turn: time.source === "previous_turn" ? state.active_time_scope!.since_turn : turn,
  });
  if (time.premise === "assumed") {
    reasons.push("MISSING_AS_OF_DATE", "ASSUMPTION_APPLIED_EXPLICITLY");
  }

  // Counterparty: named now (in the user's words), else inherited from the conversation.
  const named = frame.entity_candidates.find((e) => e.type === "counterparty");
  const previous = state.active_entities.find((e) => e.type === "counterparty");
  let counterparty: TurnScope["counterparty"] = null;
  let cpSource: Premise["source"] = "user";
  let cpSince = turn;
  const samePrevious =
    named &&
    previous &&
    (carriedBy(named.surface, [previous.value, previous.surface]) || carriedBy(previous.surface, [named.surface]));
  // A follow-up that names no party keeps the one the user confirmed (or inherited from their
  // words): a party only the interpreter model proposed never replaces it (§11.3).
  const generalQuestion = intent === "detect_open_supplier_settlements" && carriedBy("поставщик", userTexts);
  const keepPrevious = !!previous && previous.premise !== "assumed" && !generalQuestion;
  if (named && carriedBy(named.surface, userTexts))
    counterparty = { surface: named.surface, entity_id: null, premise: "confirmed" };
  else if (named && !samePrevious && keepPrevious) {
    counterparty = { surface: previous!.value, entity_id: previous!.entity_id, premise: carried(previous!.premise) };
    cpSource = "previous_turn";
    cpSince = previous!.since_turn;
    dropped.push(
      `контрагент «${named.surface}» предложен моделью вместо подтверждённого ранее — оставлен «${previous!.value}»`,
    );
  } else if (named && samePrevious) {
    // The model restated the active counterparty («по нему»): inherited, with its own mark.
    counterparty = { surface: previous.value, entity_id: previous.entity_id, premise: carried(previous.premise) };
    cpSource = "previous_turn";
    cpSince = previous.since_turn;
  } else if (named) {
    counterparty = { surface: named.surface, entity_id: null, premise: "assumed" };
    cpSource = "interpreter";
    dropped.push(`контрагент «${named.surface}» предложен моделью, в словах пользователя его нет`);
  } else if (previous && !generalQuestion) {
    // A follow-up («а на 10.04.2026?») keeps the counterparty together with the topic; a new
    // question about suppliers in general («по каким поставщикам…») starts without it.
    counterparty = { surface: previous.value, entity_id: previous.entity_id, premise: carried(previous.premise) };
    cpSource = "previous_turn";
    cpSince = previous.since_turn;
  }
  if (counterparty) {
    premises.push({
      kind: "entity",
      key: "counterparty",
      value: counterparty.surface,
      label: "Контрагент",
      status: counterparty.premise,
      source: cpSource,
      since_turn: cpSince,
    });
    if (counterparty.premise === "assumed") reasons.push("ASSUMPTION_APPLIED_EXPLICITLY");
  }

  let gate: Gate = "proceed";
  let clarifying_question: string | null = null;
  let reading: TermReading | null = null;
  let role: TurnScope["role"] = askedRole(userTexts.filter(Boolean).join(" "));

  if (intent === "detect_open_supplier_settlements") {
    // «Сколько нам должна Ромашка?» read as a supplier question is still a customer's debt to us,
    // unless the user speaks of suppliers (an advance to a supplier is in the supplier register).
    role = role === "customer" && !carriedBy("поставщик", userTexts) ? "customer" : "supplier";
    const groupSaid =
      frame.entity_candidates.some((e) => e.type === "counterparty_group") && carriedBy("поставщик", userTexts);
    const groupKnown = state.active_entities.find((e) => e.type === "counterparty_group");
    const groupStatus: PremiseStatus = groupSaid ? "confirmed" : groupKnown ? carried(groupKnown.premise) : "assumed";
    premises.push({
      kind: "entity",
      key: "counterparty_group",
      value: "поставщики (контрагенты с ролью «поставщик»)",
      label: "Круг контрагентов",
      status: groupStatus,
      source: groupSaid ? "user" : groupKnown ? "previous_turn" : "default",
      since_turn: groupSaid || !groupKnown ? turn : groupKnown.since_turn,
    });
    if (groupStatus === "assumed") reasons.push("ASSUMPTION_APPLIED_EXPLICITLY");
    const term = frame.business_terms[0];
    const known = state.resolved_business_terms[0];
    const termBlocking = frame.ambiguities.some((a) => a.kind === "term" && a.blocking);
    const said = detectReading(userTexts.filter(Boolean).join(" "));
    const key = term?.surface ?? known?.surface ?? "хвосты";
    /** The premise that names which reading of the business term the answer uses. */
    const readingPremise = (
      surface: string,
      value: keyof typeof READINGS,
      status: Premise["status"],
      source: Premise["source"],
      since_turn = turn,
    ): Premise => ({
      kind: "business_term",
      key: surface,
      value,
      label: `Трактовка: ${READINGS[value].short}`,
      status,
      source,
      since_turn,
    });
    if (said) {
      reading = said;
      premises.push(readingPremise(key, reading, "confirmed", "user"));
    } else if (known) {
      reading = known.resolved_to;
      const status = carried(known.premise);
      premises.push(readingPremise(known.surface, reading, status, "previous_turn", known.since_turn));
      if (status === "assumed") reasons.push("AMBIGUOUS_BUSINESS_TERM", "ASSUMPTION_APPLIED_EXPLICITLY");
    } else if (term?.reading && !termBlocking) {
      // The model picked a reading the user never gave: used, but as a marked assumption.
      reading = term.reading;
      premises.push(readingPremise(key, reading, "assumed", "interpreter"));
      reasons.push("AMBIGUOUS_BUSINESS_TERM", "ASSUMPTION_APPLIED_EXPLICITLY");
      dropped.push(`трактовка «${READINGS[reading].short}» предложена моделью, пользователь её не называл`);
    } else if (termBlocking) {
      gate = "clarify";
      reasons.push("AMBIGUOUS_BUSINESS_TERM", "MULTIPLE_VALID_INTERPRETATIONS", "NEEDS_USER_CONFIRMATION");
      clarifying_question = `Что считать «${term?.surface ?? "хвостами"}»: ${READINGS.open_settlement_balance.ru}, ${READINGS.overdue_settlements.ru} или ${READINGS.unclosed_documents.ru}?`;
    } else {
      reading = DEFAULT_READING;
      premises.push(readingPremise(term?.surface ?? "хвосты", reading, "assumed", "default"));
      reasons.push("AMBIGUOUS_BUSINESS_TERM", "ASSUMPTION_APPLIED_EXPLICITLY");
    }
  } else if (!counterparty) {
    gate = "clarify";
    reasons.push("QUESTION_UNDER_SPECIFIED", "NEEDS_USER_CONFIRMATION");
    clarifying_question = "По какому контрагенту проверить? Назовите его (например, «ООО «Альфа-Снаб»») или ИНН.";
  }

  return {
    intent,
    gate,
    reading,
    counterparty,
    role,
    // Only a role noun the user wrote narrows a name: «мы должны Альфе» says which side of the
    // settlements is asked, not which party — we can owe a customer too (an advance received).
    role_said:
      carriedBy("поставщик", userTexts) || carriedBy("покупател", userTexts) || carriedBy("заказчик", userTexts),
    time,
    premises,
    reasons: [...new Set(reasons)],
    clarifying_question,
    ...(dropped.length ? { not_from_user: dropped } : {}),
    ...(asksDueDate(userTexts.filter(Boolean).join(" ")) ? { asks_due_date: true } : {}),
  };
}
