import type { EscalationReason } from "./types";

/**
 * The escalation reason read off the patient's own words, for when the model hands a dialogue
 * to a human without naming one (the router chose escalate_human, the branch's STATE_JSON
 * had no `escalation_reason`). Only clear cues count; no cue → null, the reason stays unknown
 * rather than guessed. Order: what endangers the patient first.
 */
const CUES: [EscalationReason, RegExp][] = [
  [
    "acute_pain",
    /кровотеч|невыносим|очень сильн\w* бол|острая боль|резк\w* бол|не могу дышать|задыха|скор(ую|ой)|температур\w* (под )?(39|40)/i,
  ],
  ["surgery", /операци|оперир|наркоз|стационар|госпитализ/i],
  ["angry", /безобраз|возмутительн|ужасн|хамств|хамите|жалоб[аоуы]|сколько можно|издевательств|бесит/i],
  [
    "explicit_request",
    /оператор|администратор|живо(й|го|му) (человек|сотрудник)|с человеком|позов\w+ (человека|сотрудника|врача)|соедин\w+ с/i,
  ],
];

export function escalationReasonFromText(text: string): EscalationReason | null {
  for (const [reason, re] of CUES) if (re.test(text)) return reason;
  return null;
}
