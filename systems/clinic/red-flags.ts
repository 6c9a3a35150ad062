/**
 * Acute red flags in the patient's own words (issue 14 item 6). When one is present the thread is
 * handed to a human with reason `acute_pain` and the fixed emergency reply, before the router and
 * without any branch call, whatever the loop guard's counters say: patient safety comes first.
 *
 * The lexicon is small on purpose and works on normalized stems (lower case, ё → е, punctuation
 * → spaces), so inflections and word order within a short window match ("сильное кровотечение",
 * "кровь не останавливается", "не могу дышать", "задыхаюсь", "болит в груди", "потерял сознание").
 * `W` lets up to two words stand between the parts of a phrase. A flag right after a negation
 * («не задыхаюсь», «сознание не терял») does not count, nor does a stuffy nose («дышать носом»).
 *
 *   bleeding       — heavy or unstoppable bleeding
 *   breathing      — cannot breathe, choking
 *   chest_pain     — pain or pressure in the chest, heart attack
 *   consciousness  — fainting, loss of consciousness
 *   stroke         — stroke signs (a numb or drooping half of the face, a limb gone)
 *   anaphylaxis    — a swelling throat, tongue or face, anaphylaxis
 *   seizure        — a fit
 *   suicide        — self-harm intent
 *   severe_pain    — unbearable pain, very high fever
 */

/** Up to two words between the parts of a phrase, none of them a negation. */
const W = "(?:(?!(?:не|нет|ни) )\\S+ ){0,2}";
/** Word stems in order, each starting a word, with up to two words between them. */
const phrase = (...stems: string[]) => `(?:^| )${stems.map((s) => `(?:${s})\\S*`).join(` ${W}`)}`;

const LEXICON: [string, RegExp][] = [
  [
    "bleeding",
    new RegExp(
      [
        phrase("сильн|обильн|очень сильн|ужасн|не останавлива|хлещ|фонтан", "кров"),
        phrase("кров", "не", "останавл|прекращ|остан"),
        phrase("кровотеч", "сильн|обильн|не останавл|не прекращ"),
        phrase("истека", "кров"),
        phrase("много", "крови"),
      ].join("|"),
    ),
  ],
  [
    "breathing",
    new RegExp(
      [
        phrase("не", "могу", "дыш|вдохн|вздохн|дохнуть"),
        phrase("задыха|удушь|удуша"),
        phrase("нечем", "дыш"),
        phrase("трудно|тяжело|тяжко", "дыш"),
        phrase("не", "дышит"),
      ].join("|"),
    ),
  ],
  [
    "chest_pain",
    new RegExp(
      [
        phrase("бол|давит|давящ|жжет|жжени|сдавл|сжима", "в|за", "груд"),
        phrase("груд", "бол|давит|жжет|сжима"),
        phrase("инфаркт"),
        phrase("сердечн", "приступ"),
      ].join("|"),
    ),
  ],
  [
    "consciousness",
    new RegExp(
      [
        phrase("потер|теря|отключ", "сознан"),
        phrase("без", "сознан"),
        phrase("сознан", "потер|теря"),
        phrase("обморок|обморочн"),
        phrase("упал|упала", "в", "обморок"),
        phrase("не", "приходит", "в", "себя"),
      ].join("|"),
    ),
  ],
  [
    "stroke",
    new RegExp([phrase("инсульт"), phrase("онемел|отнял|перекоси|парализ", "лиц|рук|ног|половин|сторон")].join("|")),
  ],
  [
    "anaphylaxis",
    new RegExp(
      [
        phrase("анафилак"),
        phrase("отек", "квинке"),
        phrase("отек|отека|опух|распух|отекл", "горл|язык|гортан|лиц|губ"),
      ].join("|"),
    ),
  ],
  [
    "seizure",
    new RegExp(
      [
        phrase("припадок|припадк"),
        phrase("судорожн", "приступ"),
        phrase("эпилептич", "приступ"),
        phrase("бьется", "в", "судорог"),
      ].join("|"),
    ),
  ],
  [
    "suicide",
    new RegExp(
      [phrase("покончить", "с", "собой"), phrase("суицид"), phrase("убить", "себя"), phrase("не", "хочу", "жить")].join(
        "|",
      ),
    ),
  ],
  [
    "severe_pain",
    new RegExp(
      [
        phrase("невыносим|нестерпим|адск|дикая|дикой", "бол"),
        phrase("очень", "сильн", "бол"),
        phrase("температур", "под|выше|больше|уже", "40|41|42"),
        phrase("температур", "40|41|42"),
      ].join("|"),
    ),
  ],
];

/** The lexicon's patterns made global once (scanning is synchronous: `lastIndex` is reset per scan). */
const SCANS: [string, RegExp][] = LEXICON.map(([name, re]) => [name, new RegExp(re.source, "g")]);

/** Contexts that disarm a flag: a stuffy nose is not an airway emergency. */
const DISARM = [/дыш\S* (?:\S+ )?нос/, /заложен\S* нос/];
const NEGATIONS = new Set(["не", "нет", "ни", "никогда", "без"]);

export const normalizeForFlags = (text: string): string =>
  text
    .toLowerCase()
    .replace(/ё/g, "е")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

/** The red flags in `text` (names from the lexicon above), empty when none. */
export function acuteRedFlags(text: string): string[] {
  const norm = normalizeForFlags(text);
  if (!norm || DISARM.some((d) => d.test(norm))) return [];
  const found: string[] = [];
  for (const [name, g] of SCANS) {
    g.lastIndex = 0;
    for (let m; (m = g.exec(norm));) {
      const start = m.index + (m[0].startsWith(" ") ? 1 : 0);
      const before = norm.slice(0, start).trimEnd().split(" ");
      const prev = before.at(-1) ?? "";
      const next =
        norm
          .slice(m.index + m[0].length)
          .trimStart()
          .split(" ")[0] ?? "";
      // "не задыхаюсь", "боли в груди нет" — but "без сознания" and "не могу дышать" carry their own "не"/"без".
      if (!NEGATIONS.has(prev) && next !== "нет") {
        found.push(name);
        break;
      }
      if (m[0].length === 0) g.lastIndex++;
    }
  }
  return found;
}
