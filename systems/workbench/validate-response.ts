// Stage 12: algorithmic checks of the final answer — every [[identity]] exists in the snapshot and
// was passed to the model, the format holds, and the answer claims no change the Workbench never
// made (domain mutations are outside this flow).
import { unsupportedNumbers } from "./answer-numbers";
import { fold, IDENTITY_RE, UUID_RE } from "./text";

export interface ValidationIssue {
  code:
    | "unknown_identity"
    | "not_in_context"
    | "empty_answer"
    | "malformed_citation"
    | "too_long"
    | "claimed_change"
    | "unsupported_number"
    | "raw_json";
  detail?: string;
}

export interface ValidationResult {
  ok: boolean;
  issues: ValidationIssue[];
  citations: string[];
}

const CITATION_RE = /\[\[([^\[\]\n]{1,256})\]\]/g;

// Claims of having changed the workspace, recognised by morphology rather than by phrases: a
// mutation verb stem (изменить, обновить, удалить, создать, переименовать, внести, поменять…) in a
// form that reports a completed act — the past tense («я поменял», «удалила», «мы обновили»), a
// short passive participle («обновлена», «удалён», «изменены», «переименован») or a noun of change
// with such a verb («изменения внесены», «внёс изменения»). English: "I('ve) updated…", "has been
// deleted", "changes were saved". A description of the workspace's own history («заменена в 2025
// году», «создан ранее») is not a claim: a dated or past-marked sentence is skipped, and an
// infinitive or imperative («можно удалить», «удалите в дереве») never matches.
/** Stems whose short participle is itself a claim («формула обновлена», «композиция удалена»). */
const STRONG_STEMS = [
  "измен",
  "обнов",
  "удал",
  "переимен",
  "помен",
  "исправ",
  "отредактир",
  "модифицир",
  "скорректир",
  "перезапис",
  "переписа",
  "вн[её]с",
  "убр",
];
/** Stems whose participle also describes a document («создана для…», «добавлены поля»): a claim only when addressed. */
const WEAK_STEMS = [
  "созд",
  "добав",
  "сохран",
  "замен",
  "перен[её]с",
  "перемест",
  "перемещ",
  "опублик",
  "дополн",
  "поправ",
  "откат",
];
const alt = (xs: string[]) => [...xs].sort((a, b) => b.length - a.length).join("|");
// Past tense: a verb-suffix vowel, then л/ла/ло/ли (reflexive allowed); «внёс», «перенёс» end in the stem.
const PAST = "(?:[аеиыуяо]?(?:л|ла|ло|ли)(?:ся|сь)?)";
// Short passive participles: ен/ён/ена/ено/ены, ан/ана…, ован…, т/та… («изменённая» — a full adjective — is not one).
const PARTICIPLE = "(?:[её]н[аоы]?|ан[аоы]?|ован[аоы]?|т[аоы]?)";
const ALL = alt([...STRONG_STEMS, ...WEAK_STEMS]);
const PAST_RE = new RegExp(
  `(?:^|[^\\p{L}])((?:(?:${ALL})[а-яё]{0,4}?${PAST})|(?:вн[её]с|перен[её]с)(?:ла|ло|ли)?)(?![\\p{L}])`,
  "iu",
);
const STRONG_PART_RE = new RegExp(
  `(?:^|[^\\p{L}])((?:${alt(STRONG_STEMS)})[а-яё]{0,3}?${PARTICIPLE})(?![\\p{L}])`,
  "iu",
);
const WEAK_PART_RE = new RegExp(`(?:^|[^\\p{L}])((?:${alt(WEAK_STEMS)})[а-яё]{0,3}?${PARTICIPLE})(?![\\p{L}])`, "iu");
/** Signs that a sentence describes the document's history, not an act of this conversation. */
const HISTORY_RE =
  /(?:(?:^|[^\p{N}])(?:19|20)\d{2}(?!\p{N})|ранее|когда-то|в прошлом|давно|изначально|в версии|исторически|автором|в истории|\d{1,2}\.\d{1,2}\.\d{2,4})/iu;
const SPEAKER_RE = /(?:^|[^\p{L}])(?:я|мы)(?![\p{L}])/iu;
/** The act is presented to the user as done now. */
const ADDRESSED_RE =
  /(?:для вас|за вас|по вашей просьбе|по вашему запросу|как вы просили|готово|сделано|успешно|только что|теперь)/iu;
const OPENER_RE = /^[\s\p{P}]*(?:(?:готово|сделано|хорошо|ок|окей|итак|так|уже)[\s\p{P}]*)?$/iu;
const ENGLISH_VERBS =
  "changed|updated|deleted|created|renamed|moved|modified|saved|removed|added|edited|fixed|replaced|rewrote|rewritten|applied|published";
const ENGLISH_RES = [
  new RegExp(
    `\\b(?:I|we)(?:\\s+have|\\s+had|['’]ve|\\s+just|\\s+already|\\s+now|\\s+successfully)*\\s+(?:${ENGLISH_VERBS})\\b`,
    "i",
  ),
  new RegExp(`\\b(?:has|have)\\s+(?:now\\s+|just\\s+|successfully\\s+)?been\\s+(?:${ENGLISH_VERBS})\\b`, "i"),
  /\b(?:changes?|edits?|updates?)\s+(?:were|was|are|is|have\s+been|has\s+been)\s+(?:now\s+|successfully\s+)?(?:saved|applied|made|committed|published)\b/i,
];

/** The first phrase of `text` claiming a change this flow never makes, or undefined. */
export function findClaimedChange(text: string): string | undefined {
  for (const sentence of text.split(/(?<=[.!?…])\s+|\n+/u)) {
    const s = sentence.trim();
    if (!s) continue;
    for (const re of ENGLISH_RES) {
      const m = re.exec(s);
      if (m) return m[0].trim();
    }
    if (HISTORY_RE.test(s)) continue;
    const addressed = ADDRESSED_RE.test(s);
    const past = PAST_RE.exec(s);
    if (past) {
      const before = s.slice(0, past.index + past[0].length - past[1]!.length);
      // «я поменял», «мы обновили» — the speaker before the verb, not a relative clause about someone else
      const speaker = SPEAKER_RE.test(before) && !/котор/iu.test(before.slice(before.search(SPEAKER_RE)));
      if (speaker || OPENER_RE.test(before) || addressed) return past[1];
    }
    const strong = STRONG_PART_RE.exec(s);
    if (strong) return strong[1];
    const weak = WEAK_PART_RE.exec(s);
    if (weak && addressed) return weak[1];
  }
  return undefined;
}

export function extractCitations(answer: string): string[] {
  return [...new Set([...answer.matchAll(CITATION_RE)].map((m) => m[1]!.trim()))];
}

export function validateResponse(
  answer: string,
  opts: {
    exists: (identity: string) => boolean;
    passed: ReadonlySet<string>;
    /** Identities named inside passed documents' content (model-request.ts referencedIdentities). */
    referenced?: ReadonlySet<string>;
    /** Figures the context holds (answer-numbers.ts contextNumbers); set → any other figure is refused. */
    numbers?: ReadonlySet<number>;
    maxChars?: number;
  },
): ValidationResult {
  const issues: ValidationIssue[] = [];
  const citations = extractCitations(answer);
  const trimmed = answer.trim();
  if (!trimmed) issues.push({ code: "empty_answer" });
  if (trimmed.length > (opts.maxChars ?? 8000)) issues.push({ code: "too_long", detail: String(trimmed.length) });
  const stripped = answer.replace(CITATION_RE, "");
  if (/\[\[|\]\]/.test(stripped)) issues.push({ code: "malformed_citation" });
  if (/^\s*[{[]/.test(trimmed) && isJson(trimmed)) issues.push({ code: "raw_json" });
  const passedFolded = new Set([...opts.passed].map(fold));
  for (const c of citations) {
    if (!opts.exists(c)) issues.push({ code: "unknown_identity", detail: c });
    else if (!passedFolded.has(fold(c))) issues.push({ code: "not_in_context", detail: c });
  }
  const shown = new Set([...passedFolded, ...[...(opts.referenced ?? [])].map(fold)]);
  for (const b of bareIdentities(stripped, opts.exists, shown)) issues.push(b);
  const claim = findClaimedChange(stripped);
  if (claim) issues.push({ code: "claimed_change", detail: claim });
  if (opts.numbers)
    for (const n of unsupportedNumbers(answer, opts.numbers))
      issues.push({ code: "unsupported_number", detail: String(n) });
  return { ok: issues.length === 0, issues, citations };
}

const DOCUMENT_PREFIXES = ["composition", "form", "entity", "report", "folder", "process"];

/**
 * Identities written without [[…]]: one of the workspace that was not given to the model is
 * `not_in_context`; an unknown one shaped like the given ones (same prefix, «composition-…») is
 * `unknown_identity`. Other hyphenated words («e-mail», «cash-flow») are left alone.
 */
function bareIdentities(
  text: string,
  exists: (identity: string) => boolean,
  passed: ReadonlySet<string>,
): ValidationIssue[] {
  // Shaped like a workspace identity: the prefix of one given, or of a document type («report-…»).
  const prefixes = new Set([
    ...[...passed].map((p) => p.split(/[-_.]/)[0]!).filter((p) => p.length >= 3),
    ...DOCUMENT_PREFIXES,
  ]);
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  const tokens = [
    ...text.matchAll(new RegExp(IDENTITY_RE.source, "giu")),
    ...text.matchAll(new RegExp(UUID_RE.source, "gi")),
  ].map((m) => m[0].replace(/\.$/, ""));
  for (const tok of tokens) {
    const f = fold(tok);
    if (seen.has(f) || passed.has(f)) continue;
    seen.add(f);
    if (exists(tok)) out.push({ code: "not_in_context", detail: tok });
    else if (prefixes.has(f.split(/[-_.]/)[0]!) && /[-_]/.test(f)) out.push({ code: "unknown_identity", detail: tok });
  }
  return out;
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
