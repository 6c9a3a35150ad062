import type { EscalationReason } from "./types";

/**
 * The escalation reason read off the patient's own words, for when the model hands a dialogue
 * to a human without naming one (the router chose escalate_human, the branch's STATE_JSON
 * had no `escalation_reason`). Only clear cues count; no cue → null, the reason stays unknown
 * rather than guessed. Order: what endangers the patient first. Word edges are `\p{L}` with the
 * `u` flag: JavaScript's `\w` and `\b` know only Latin letters, so «сильн\w* бол» never matched
 * «сильная боль» (test/scripts/regex-cyrillic.test.ts keeps them out).
 */
const CUES: [EscalationReason, RegExp][] = [
  [
    "acute_pain",
    /кровотеч|невыносим|очень сильн\p{L}* бол|острая боль|резк\p{L}* бол|не могу дышать|задыха|скор(ую|ой)|температур\p{L}* (под )?(39|40)/iu,
  ],
  ["surgery", /операци|оперир|наркоз|стационар|госпитализ/iu],
  ["angry", /безобраз|возмутительн|ужасн|хамств|хамите|жалоб[аоуы]|сколько можно|издевательств|бесит/iu],
  [
    "explicit_request",
    /оператор|администратор|живо(й|го|му) (человек|сотрудник)|с человеком|позов\p{L}+ (человека|сотрудника|врача)|соедин\p{L}+ с/iu,
  ],
];

export function escalationReasonFromText(text: string): EscalationReason | null {
  for (const [reason, re] of CUES) if (re.test(text)) return reason;
  return null;
}
