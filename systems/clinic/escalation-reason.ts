import { stem } from "../../driver/russian-stem";
import type { EscalationReason } from "./types";

/**
 * The escalation reason read off the patient's own words, for when the model hands a dialogue
 * to a human without naming one (the router chose escalate_human, the branch's STATE_JSON
 * had no `escalation_reason`). Only clear cues count; no cue → null, the reason stays unknown
 * rather than guessed. Order: what endangers the patient first.
 *
 * Two kinds of cue. Patterns (word edges are `\p{L}` with the `u` flag: JavaScript's `\w` and `\b`
 * know only Latin letters, test/scripts/regex-cyrillic.test.ts keeps them out) for fixed
 * expressions and numbers. Phrases on word stems (issue 43: «с живым человеком» escalated with no
 * reason, since «живо(й|го|му) человек» listed three case forms of six): each phrase is a few
 * words whose stems must follow each other in the message, so every case, number and gender form
 * counts; a word ending in `*` is a prefix of the stem (людей/людьми).
 */
const PATTERNS: [EscalationReason, RegExp][] = [
  [
    "acute_pain",
    /кровотеч|невыносим|очень сильн\p{L}* бол|острая боль|резк\p{L}* бол|не могу дышать|задыха|скор(ую|ой)|температур\p{L}* (под )?(39|40)/iu,
  ],
  ["surgery", /операци|оперир|наркоз|стационар|госпитализ/iu],
  ["angry", /безобраз|возмутительн|ужасн|хамств|хамите|жалоб[аоуы]|сколько можно|издевательств|бесит/iu],
];

const PHRASES: [EscalationReason, string[]][] = [
  [
    "explicit_request",
    [
      "оператор",
      "администратор",
      "менеджер",
      "живой человек",
      "живой сотрудник",
      "живой люд*",
      "настоящий человек",
      "реальный человек",
      "с человеком",
      "с сотрудником",
      "с людьми",
      "позвать человека",
      "позовите человека",
      "позовите сотрудника",
      "позовите врача",
      "соединить с",
      "соедините с",
      "переключите на",
      "не с ботом",
      "не бот",
    ],
  ],
];

type Cue = { reason: EscalationReason; words: { stem: string; prefix: boolean }[] };

const words = (text: string) =>
  (
    text
      .toLowerCase()
      .replace(/ё/g, "е")
      .match(/\p{L}+/gu) ?? []
  ).map(stem);

const CUES: Cue[] = PHRASES.flatMap(([reason, phrases]) =>
  phrases.map((p) => ({
    reason,
    words: p
      .split(" ")
      .map((w) => (w.endsWith("*") ? { stem: w.slice(0, -1), prefix: true } : { stem: stem(w), prefix: false })),
  })),
);

function hasPhrase(stems: string[], cue: Cue): boolean {
  const n = cue.words.length;
  for (let i = 0; i + n <= stems.length; i++) {
    if (cue.words.every((w, k) => (w.prefix ? stems[i + k]!.startsWith(w.stem) : stems[i + k] === w.stem))) return true;
  }
  return false;
}

export function escalationReasonFromText(text: string): EscalationReason | null {
  for (const [reason, re] of PATTERNS) if (re.test(text)) return reason;
  const stems = words(text);
  for (const cue of CUES) if (hasPhrase(stems, cue)) return cue.reason;
  return null;
}
