// Russian Snowball stemmer (Porter's algorithm for Russian), on folded text (ё already → е).
// In driver/, the horizontal layer every system may import (a system never imports another): the clinic reads
// escalation cues on stems with it (issue 43), the Workbench resolves names and ranks docs with it.

const VOWELS = "аеиоуыэюя";

const PERFECTIVE_GERUND_1 = ["вшись", "вши", "в"]; // after а/я
const PERFECTIVE_GERUND_2 = ["ившись", "ывшись", "ивши", "ывши", "ив", "ыв"];
const ADJECTIVE = [
  "ими",
  "ыми",
  "его",
  "ого",
  "ему",
  "ому",
  "ее",
  "ие",
  "ые",
  "ое",
  "ей",
  "ий",
  "ый",
  "ой",
  "ем",
  "им",
  "ым",
  "ом",
  "их",
  "ых",
  "ую",
  "юю",
  "ая",
  "яя",
  "ою",
  "ею",
];
const PARTICIPLE_1 = ["ем", "нн", "вш", "ющ", "щ"]; // after а/я
const PARTICIPLE_2 = ["ивш", "ывш", "ующ"];
const REFLEXIVE = ["ся", "сь"];
const VERB_1 = ["ете", "йте", "ешь", "нно", "ла", "на", "ли", "ем", "ло", "но", "ет", "ют", "ны", "ть", "й", "л", "н"]; // after а/я
const VERB_2 = [
  "ейте",
  "уйте",
  "ила",
  "ыла",
  "ена",
  "ите",
  "или",
  "ыли",
  "ило",
  "ыло",
  "ено",
  "ует",
  "уют",
  "ены",
  "ить",
  "ыть",
  "ишь",
  "ей",
  "уй",
  "ил",
  "ыл",
  "им",
  "ым",
  "ен",
  "ят",
  "ит",
  "ыт",
  "ую",
  "ю",
];
const NOUN = [
  "иями",
  "ями",
  "ами",
  "ией",
  "иям",
  "ием",
  "иях",
  "ев",
  "ов",
  "ие",
  "ье",
  "еи",
  "ии",
  "ей",
  "ой",
  "ий",
  "ям",
  "ем",
  "ам",
  "ом",
  "ах",
  "ях",
  "ию",
  "ью",
  "ия",
  "ья",
  "а",
  "е",
  "и",
  "й",
  "о",
  "у",
  "ы",
  "ь",
  "ю",
  "я",
];
const DERIVATIONAL = ["ость", "ост"];
const SUPERLATIVE = ["ейше", "ейш"];

const byLength = (xs: string[]) => [...xs].sort((a, b) => b.length - a.length);
const PG1 = byLength(PERFECTIVE_GERUND_1),
  PG2 = byLength(PERFECTIVE_GERUND_2);
const ADJ = byLength(ADJECTIVE),
  P1 = byLength(PARTICIPLE_1),
  P2 = byLength(PARTICIPLE_2);
const V1 = byLength(VERB_1),
  V2 = byLength(VERB_2),
  N = byLength(NOUN),
  REF = byLength(REFLEXIVE);

// Letters are compared by character code: `w[i]` of a Cyrillic word makes a new one-letter string
// each time (the single-character cache only covers Latin-1), and an index build stems 20k words.
const IS_VOWEL = new Uint8Array(0x460);
for (const v of VOWELS) IS_VOWEL[v.charCodeAt(0)] = 1;
const A = "а".charCodeAt(0),
  YA = "я".charCodeAt(0);

function isVowelAt(w: string, i: number): boolean {
  return IS_VOWEL[w.charCodeAt(i)] === 1;
}

/**
 * An ending list grouped by its last letter, each group in the list's order (longest first): a
 * word is compared only with the endings it could have — 1–5 instead of up to 36. The first
 * match is the same as scanning the whole list.
 */
type Endings = Map<number, string[]>;
function byLast(list: string[]): Endings {
  const m: Endings = new Map();
  for (const e of list) {
    const k = e.charCodeAt(e.length - 1);
    const g = m.get(k);
    if (g) g.push(e);
    else m.set(k, [e]);
  }
  return m;
}
const G_PG1 = byLast(PG1),
  G_PG2 = byLast(PG2),
  G_ADJ = byLast(ADJ),
  G_P1 = byLast(P1),
  G_P2 = byLast(P2),
  G_V1 = byLast(V1),
  G_V2 = byLast(V2),
  G_N = byLast(N),
  G_REF = byLast(REF),
  G_DER = byLast(DERIVATIONAL),
  G_SUP = byLast(SUPERLATIVE);

/** Start of the region after the first vowel followed by a non-vowel, at or after `from`. */
function regionAfter(w: string, from: number): number {
  for (let i = from; i < w.length - 1; i++) if (isVowelAt(w, i) && !isVowelAt(w, i + 1)) return i + 2;
  return w.length;
}

function regions(w: string): { rv: number; r2: number } {
  let rv = w.length;
  for (let i = 0; i < w.length; i++)
    if (isVowelAt(w, i)) {
      rv = i + 1;
      break;
    }
  return { rv, r2: regionAfter(w, regionAfter(w, 0)) };
}

/** Longest ending from `list` inside the region starting at `from`; `afterAYa` requires а/я before it. */
function strip(w: string, from: number, endings: Endings, afterAYa = false): string | null {
  const list = endings.get(w.charCodeAt(w.length - 1));
  if (list === undefined) return null;
  for (const e of list) {
    if (!w.endsWith(e) || w.length - e.length < from) continue;
    if (afterAYa) {
      const prev = w.charCodeAt(w.length - e.length - 1);
      if (prev !== A && prev !== YA) continue;
      if (w.length - e.length - 1 < from) continue;
    }
    return w.slice(0, w.length - e.length);
  }
  return null;
}

const CYRILLIC_WORD = /^[а-я]+$/;

export function stemWord(input: string): string {
  // A word already in lower-case а-я (the index's words are folded) is its own lower-case form.
  const w0 = CYRILLIC_WORD.test(input) ? input : input.toLowerCase().replace(/ё/g, "е");
  if (w0.length < 3 || !CYRILLIC_WORD.test(w0)) return w0;
  const { rv, r2 } = regions(w0);
  let w = w0;

  // Step 1
  const pg = strip(w, rv, G_PG1, true) ?? strip(w, rv, G_PG2);
  if (pg !== null) w = pg;
  else {
    w = strip(w, rv, G_REF) ?? w;
    const adj = strip(w, rv, G_ADJ);
    if (adj !== null) {
      w = strip(adj, rv, G_P1, true) ?? strip(adj, rv, G_P2) ?? adj;
    } else {
      const verb = strip(w, rv, G_V1, true) ?? strip(w, rv, G_V2);
      if (verb !== null) w = verb;
      else w = strip(w, rv, G_N) ?? w;
    }
  }
  // Step 2
  if (w.endsWith("и") && w.length - 1 >= rv) w = w.slice(0, -1);
  // Step 3
  const der = strip(w, r2, G_DER);
  if (der !== null) w = der;
  // Step 4
  if (w.endsWith("нн") && w.length - 2 >= rv) w = w.slice(0, -1);
  else {
    const sup = strip(w, rv, G_SUP);
    if (sup !== null) {
      w = sup;
      if (w.endsWith("нн")) w = w.slice(0, -1);
    } else if (w.endsWith("ь") && w.length - 1 >= rv) w = w.slice(0, -1);
  }
  return fleeting(w);
}

/**
 * Fleeting о/е (остаток → остатка, скидок → скидки, отец → отца): Snowball keeps the vowel in one
 * form and not in the other. Dropping a vowel before a final к/ц of every stem maps both forms to
 * one key; applied to all stems alike, it never separates two forms that matched before.
 */
function fleeting(w: string): string {
  if (w.length < 5) return w;
  return /[бвгджзклмнпрстфхцчшщ][оеё][кц]$/.test(w) ? w.slice(0, -2) + w.slice(-1) : w;
}

const cache = new Map<string, string>();

/** Memoized: the same words recur across a workspace and across requests. */
export function stem(word: string): string {
  let s = cache.get(word);
  if (s === undefined) {
    s = stemWord(word);
    if (cache.size > 200_000) cache.clear();
    cache.set(word, s);
  }
  return s;
}
