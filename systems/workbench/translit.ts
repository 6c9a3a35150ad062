// Latin↔Cyrillic transliteration as a shared "skeleton": both scripts are mapped into one lossy
// alphabet so "Obekt Alfa", "Obyekt Alfa" and "Объект Альфа" meet. Lossy on purpose — it is a
// named, weaker resolver signal ("transliteration"), never an exact match.

const CYR: Record<string, string> = {
  а: "a",
  б: "b",
  в: "v",
  г: "g",
  д: "d",
  е: "e",
  ё: "e",
  ж: "8",
  з: "z",
  и: "i",
  й: "i",
  к: "k",
  л: "l",
  м: "m",
  н: "n",
  о: "o",
  п: "p",
  р: "r",
  с: "s",
  т: "t",
  у: "u",
  ф: "f",
  х: "h",
  ц: "c",
  ч: "7",
  ш: "9",
  щ: "9",
  ъ: "",
  ы: "i",
  ь: "",
  э: "e",
  ю: "iu",
  я: "ia",
};

// Order matters: longer digraphs first.
const LATIN_RULES: Array<[RegExp, string]> = [
  [/shch/g, "9"],
  // "sch" is far more often с+ч ("Raschet" = "Расчёт") than щ; "shch" is the usual щ.
  [/sch/g, "s7"],
  [/ch/g, "7"],
  [/sh/g, "9"],
  [/zh/g, "8"],
  [/kh/g, "h"],
  // ц: "ts"/"tz", or "c" before e/i/y; any other "c" is к. A placeholder keeps the ц's from the к rule.
  [/ts|tz/g, "\u0001"],
  [/ph/g, "f"],
  [/ck/g, "k"],
  [/c(?=[eiy])/g, "\u0001"],
  [/c/g, "k"],
  [/\u0001/g, "c"],
  [/x/g, "ks"],
  [/q/g, "k"],
  [/w/g, "v"],
  [/j/g, "i"],
  [/y/g, "i"],
];

const SHARED_RULES: Array<[RegExp, string]> = [
  [/i([aeiou])/g, "$1"], // ya/ia, yu/iu, ye/ie: the glide is spelled inconsistently
  [/(.)\1+/g, "$1"], // doubled letters
];

export function hasLatin(s: string): boolean {
  return /[a-z]/i.test(s);
}

export function hasCyrillic(s: string): boolean {
  return /[\u0400-\u04ff]/.test(s);
}

// CYR by character code (lower-case а–я and ё), for the fast path below.
const CYR_CODES: Array<number[] | undefined> = [];
for (const [ch, to] of Object.entries(CYR)) CYR_CODES[ch.charCodeAt(0)] = [...to].map((c) => c.charCodeAt(0));
const I = 0x69;
const IS_AEIOU = (c: number) => c === 0x61 || c === 0x65 || c === I || c === 0x6f || c === 0x75;

/**
 * computeSkeleton of a word of lower-case Cyrillic letters and digits (every name word an index
 * skeletonizes, bar the Latin ones): the same mapping and the same two shared rules, applied to
 * character codes instead of by string concatenation and two regex replaces. Undefined for any
 * other word.
 */
function cyrillicSkeleton(folded: string): string | undefined {
  // Each letter maps to at most two: a word's codes fit in twice its length.
  if (scratch.length < 2 * folded.length) scratch = new Uint16Array(4 * folded.length);
  let n = 0;
  for (let j = 0; j < folded.length; j++) {
    const c = folded.charCodeAt(j);
    const to = CYR_CODES[c];
    if (to !== undefined) for (let t = 0; t < to.length; t++) scratch[n++] = to[t]!;
    else if (c >= 0x30 && c <= 0x39) scratch[n++] = c;
    else return undefined;
  }
  // In place, as the output never outruns the input: first /i([aeiou])/g → "$1" (left to right,
  // a match consumes both letters), then /(.)\1+/g → "$1" (a run of one letter becomes that letter).
  let m = 0;
  for (let p = 0; p < n; p++) {
    if (scratch[p] === I && p + 1 < n && IS_AEIOU(scratch[p + 1]!)) p++;
    scratch[m++] = scratch[p]!;
  }
  let k = 0;
  for (let p = 0; p < m; p++) if (p === 0 || scratch[p] !== scratch[p - 1]) scratch[k++] = scratch[p]!;
  return String.fromCharCode.apply(null, scratch.subarray(0, k) as unknown as number[]);
}
let scratch = new Uint16Array(64);

/** Skeleton of one folded word (either script, or mixed). */
function computeSkeleton(folded: string): string {
  const fast = cyrillicSkeleton(folded);
  if (fast !== undefined) return fast;
  let out = "";
  let latinRun = "";
  const flush = () => {
    if (!latinRun) return;
    let s = latinRun;
    for (const [re, to] of LATIN_RULES) s = s.replace(re, to);
    out += s;
    latinRun = "";
  };
  for (const ch of folded) {
    const c = CYR[ch];
    if (c !== undefined) {
      flush();
      out += c;
    } else if (ch >= "a" && ch <= "z") latinRun += ch;
    else {
      flush();
      out += ch;
    }
  }
  flush();
  for (const [re, to] of SHARED_RULES) out = out.replace(re, to);
  return out;
}

const cache = new Map<string, string>();

/** Memoized: a workspace repeats the same words across thousands of names. */
export function skeletonWord(folded: string): string {
  let s = cache.get(folded);
  if (s === undefined) {
    s = computeSkeleton(folded);
    if (cache.size > 200_000) cache.clear();
    cache.set(folded, s);
  }
  return s;
}

export function skeleton(words: readonly string[]): string {
  return words.map(skeletonWord).join(" ");
}
