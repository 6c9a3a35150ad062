// The deterministic interpreter: reads the simple, common questions without a model (offline
// mode, and the fallback when the model's answer fails its schema twice). It returns the same
// shape a model would, or null when it cannot read the question — then a model is needed.
import type { ConversationState, Intent } from "./artifacts";
import { detectReading, INFORMAL_TERM, INTENT_INFO } from "./glossary";
import { asksDueDate } from "./due-question";
import { findDateSurface } from "./mcp-server/dates";
import type { InterpreterOutput } from "./model-outputs";

const lower = (s: string) => s.toLowerCase().replace(/ё/g, "е");

/** A counterparty named in the text: «…» in quotes, ООО/АО/ИП + name, «по Name», or an INN. */
export function findCounterpartySurface(text: string): string | null {
  const quoted = text.match(/(?:(ООО|АО|ПАО|ЗАО|ИП)\s+)?[«"“]([^»"”]{2,80})[»"”]/);
  if (quoted) return quoted[2]!.trim();
  const legal = text.match(
    /(?<![А-Яа-яЁё])(?:ООО|АО|ПАО|ЗАО|ИП)\s+([А-ЯЁA-Z][\p{L}\d_-]*(?:\s+[А-ЯЁ][\p{L}\d_-]*){0,2})/u,
  );
  if (legal) return legal[1]!.trim();
  // «по поставщику Альфа-Снаб», «у контрагента Вектор»: the role word is not the name.
  const role = text.match(
    /(?:поставщик|контрагент|покупател)[а-яё]*\s+([А-ЯЁ][а-яё]+(?:-[А-ЯЁа-яё][а-яё]+)?(?:\s+[А-ЯЁ][а-яё]+)?)/u,
  );
  if (role) return role[1]!.trim();
  // «мы должны Ромашке», «долг перед Вектором»: the party a debt is owed to.
  const owed = text.match(/(?:должн[а-яё]*|перед|задолжал[а-яё]*)\s+([А-ЯЁ][а-яё]+(?:-[А-ЯЁа-яё][а-яё]+)?)/u);
  if (owed) return owed[1]!.trim();
  const inn = text.match(/\b(\d{10}|\d{12})\b/);
  if (inn) return inn[1]!;
  const by = text.match(/(?:^|[\s,])(?:по|у|с|для|от)\s+([А-ЯЁ][а-яё]+(?:-[А-ЯЁа-яё][а-яё]+)?(?:\s+[А-ЯЁ][а-яё]+)?)/u);
  if (by) return by[1]!.trim();
  return null;
}

const PRONOUN = /по нему|по ним(?![а-яё])|у него|у них|этому контрагенту|этого контрагента|по этому|тому же|него же/;
const SETTLEMENT =
  /хвост|висят|висит|незакрыт|задолженност|кредиторк|(?<![а-яёa-z])долг|должны|должен|остатк|остаток|сальдо|расчет/;

function intentFor(t: string, named: boolean): Intent | null {
  if (/поставщик/.test(t) && (SETTLEMENT.test(t) || /просроч/.test(t)) && !named)
    return "detect_open_supplier_settlements";
  if (named) {
    // «До какого числа нужно оплатить X?» asks when our debt to X falls due: its balance and payment
    // terms, not the payments made.
    if (asksDueDate(t)) return "counterparty_balance";
    if (
      /неоплачен|незакрыт\S*\s+документ|документ\S*\s+не\s+(?:закрыт|оплач)|какие документы|незакрытые документы/.test(
        t,
      )
    )
      return "unclosed_documents";
    if (/оплат|платеж|платил|перечисл/.test(t)) return "payment_chain";
    if (SETTLEMENT.test(t) || /баланс|сколько/.test(t)) return "counterparty_balance";
    return null;
  }
  if (INFORMAL_TERM.test(t)) return "detect_open_supplier_settlements";
  return null;
}

export function interpretDeterministic(text: string, state: ConversationState): InterpreterOutput | null {
  const t = lower(text);
  // A short reply to an open clarification («Альфа-Снаб») is the name itself.
  const bare = text
    .trim()
    .replace(/^[«"“]|[»"”.!?]$/g, "")
    .trim();
  const replyName =
    state.pending_question &&
    bare.split(/\s+/).length <= 4 &&
    /^[А-ЯЁA-Z«"]/.test(text.trim()) &&
    !findDateSurface(text) &&
    !detectReading(text)
      ? bare
      : null;
  const surface = findCounterpartySurface(text) ?? replyName;
  const pronoun = PRONOUN.test(t);
  const dateSurface = findDateSurface(text);
  const reading = detectReading(text);
  const inheritedCounterparty = state.active_entities.find((e) => e.type === "counterparty");
  let intent = intentFor(t, !!surface || pronoun);

  // A short follow-up («а на 31 марта?», «любые незакрытые остатки», «Альфа-Снаб») continues the
  // open question or the active one; it never starts a new topic on its own.
  const followUp = !intent && (dateSurface || reading || surface || pronoun);
  if (!intent && followUp) intent = state.pending_intent ?? state.active_intent;
  if (!intent) return null;
  if (
    intent === "detect_open_supplier_settlements" &&
    surface &&
    !/поставщик/.test(t) &&
    (state.pending_intent ?? state.active_intent) &&
    (state.pending_intent ?? state.active_intent) !== intent
  ) {
    intent = (state.pending_intent ?? state.active_intent)!;
  }

  const subject = surface ? `«${surface}»` : inheritedCounterparty ? `«${inheritedCounterparty.value}»` : "(не указан)";
  const info = INTENT_INFO[intent as Exclude<Intent, "unsupported">];
  const informal = t.match(/хвост[а-яё]*/)?.[0] ?? t.match(/вися[а-яё]*|висит/)?.[0] ?? null;
  const entity_candidates: InterpreterOutput["entity_candidates"] = [];
  if (/поставщик/.test(t))
    entity_candidates.push({
      surface: "поставщики",
      type: "counterparty_group",
      confidence: 0.95,
      requires_domain_resolution: false,
    });
  if (surface)
    entity_candidates.push({ surface, type: "counterparty", confidence: 0.8, requires_domain_resolution: true });
  if (informal)
    entity_candidates.push({
      surface: informal,
      type: "informal_business_term",
      confidence: 0.4,
      requires_domain_resolution: true,
    });

  const business_terms: InterpreterOutput["business_terms"] = [];
  if (intent === "detect_open_supplier_settlements") {
    business_terms.push({ surface: informal ?? "незакрытые расчёты", reading, explicit: reading !== null });
  }
  const ambiguities: InterpreterOutput["ambiguities"] = [];
  if (intent === "detect_open_supplier_settlements" && !reading)
    ambiguities.push({ kind: "term", text: `Не определено, что считать «${informal ?? "хвостами"}»`, blocking: false });
  if (!dateSurface) ambiguities.push({ kind: "time", text: "Не указана дата отсечения", blocking: false });

  return {
    normalized_question: info.normalized(subject),
    business_intent: intent,
    expected_answer_shape: info.shape,
    domain_candidates: [info.domain],
    time_scope: { explicit_period: null, as_of_date: null, surface: dateSurface, needs_resolution: true },
    entity_candidates,
    business_terms,
    ambiguities,
    success_criteria: info.criteria,
  };
}
