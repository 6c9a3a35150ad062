// Reply classification (seed 000): explicit commands and candidate clicks are decided by code;
// only ambiguous free text goes to the CLASSIFIER role. Beyond v0.6.0: an ordinal and descriptive
// resolver ("первую", "последний вариант", "ту, что в папке Архив", "форму, не сущность"), and
// what a free-text reply then changes in the plan.
import { z } from "zod";
import { CANCEL_WORDS, commandOf, typeOf } from "./lexicon";
import { stem } from "./stem";
import { tokenizeClause } from "./clause";
import type { PlanUpdate } from "./patch";
import { parseClause } from "./plan";
import { resolveMention } from "./resolve";
import type { ResolverIndex } from "./resolve-index";
import { isReference } from "./resolve-tasks";
import { fold, IDENTITY_RE, words } from "./text";
import type { Candidate } from "./types";
import { listsType, readsDocumentation } from "./intents";

export const REPLY_KINDS = ["answer", "correction", "new_request", "cancel", "unclear"] as const;
export type ReplyKind = (typeof REPLY_KINDS)[number];
export const ClassifierOutputSchema = z.object({ kind: z.enum(REPLY_KINDS) }).strict();

export type CodeDecision =
  | { kind: "answer"; candidateId: string; by: "click" | "ordinal" | "descriptive" | "name" }
  | { kind: "cancel"; by: "command" }
  | { kind: "free_text"; hasCommand: boolean };

const ORDINALS: Array<[RegExp, number]> = [
  [/^(?:перв[а-яё]*|1|один|одна|одну|номер\s*1|№\s*1)$/, 0],
  [/^(?:втор[а-яё]*|2|два|две|номер\s*2|№\s*2)$/, 1],
  [/^(?:трет[а-яё]*|3|три|номер\s*3|№\s*3)$/, 2],
  [/^(?:четверт[а-яё]*|4|четыре)$/, 3],
  [/^(?:пят[а-яё]*|5|пять)$/, 4],
];
const LAST = /^(?:последн[а-яё]*|нижн[а-яё]*)$/;
const NOISE = new Set([
  "вариант",
  "варианта",
  "пункт",
  "давай",
  "давайте",
  "выбираю",
  "выбери",
  "возьми",
  "возьму",
  "пожалуйста",
  "нужна",
  "нужен",
  "нужно",
  "нужную",
  "мне",
  "ту",
  "тот",
  "та",
  "то",
  "эту",
  "этот",
  "это",
  "которая",
  "который",
  "что",
  "лежит",
  "в",
  "во",
  "из",
  "на",
  "папке",
  "папки",
  "папка",
  "да",
  "ок",
  "конечно",
  "пусть",
  "будет",
  "с",
  "со",
  "и",
  "а",
  "же",
]);

/** The index of the candidate an ordinal reply names, or null. Short replies only. */
export function ordinalIndex(text: string, count: number): number | null {
  const ws = words(fold(text)).filter((w) => !NOISE.has(w));
  if (ws.length === 0 || ws.length > 3) return null;
  for (const w of ws) {
    if (LAST.test(w)) return count > 0 ? count - 1 : null;
    for (const [re, i] of ORDINALS) if (re.test(w)) return i < count ? i : null;
  }
  return null;
}

const stemMatch = (a: string, b: string) => {
  if (a === b) return true;
  const n = Math.min(a.length, b.length);
  return n >= 4 && (a.startsWith(b) || b.startsWith(a));
};

/**
 * Descriptive choice: reply words matched against what tells the candidates apart — folder, type
 * (with "не X" excluding a type), name and identity. Unique best match or nothing.
 */
export function descriptiveChoice(text: string, candidates: readonly Candidate[]): string | null {
  const f = fold(text);
  const ws = words(f);
  if (ws.length === 0 || ws.length > 8) return null;
  const byIdentity = candidates.filter((c) => f.includes(fold(c.identity)));
  if (byIdentity.length === 1) return byIdentity[0]!.candidateId;
  const excluded = new Set<string>();
  const wanted = new Set<string>();
  ws.forEach((w, i) => {
    const t = typeOf(w);
    if (!t) return;
    if (ws[i - 1] === "не" || ws[i - 1] === "кроме") excluded.add(t);
    else wanted.add(t);
  });
  const content = ws.filter((w) => !NOISE.has(w) && w !== "не" && !typeOf(w));
  // A word matches by stem, or by a shared beginning of the raw words ("архивную" ~ "Архив":
  // Snowball over-stems "архив" to "арх", so stems alone would miss it).
  const same = (w: string, x: string) => stemMatch(stem(w), stem(x)) || stemMatch(w, x);
  const scores = candidates.map((c) => {
    if (excluded.has(c.documentType)) return { c, score: -1 };
    let score = wanted.has(c.documentType) ? 2 : 0;
    const folderWords = words(fold(c.folderName ?? ""));
    const nameWords = words(fold(c.displayName));
    for (const w of content) {
      if (folderWords.some((x) => same(w, x))) score += 2;
      else if (nameWords.some((x) => same(w, x))) score += 1;
    }
    return { c, score };
  });
  const alive = scores.filter((s) => s.score >= 0);
  if (excluded.size && alive.length === 1) return alive[0]!.c.candidateId;
  const best = Math.max(...alive.map((s) => s.score), 0);
  if (best <= 0) return null;
  const top = alive.filter((s) => s.score === best);
  return top.length === 1 ? top[0]!.c.candidateId : null;
}

const WANTS_CURRENT = /(?:актуальн|текущ|действующ|рабоч|работает|используется|основн|нов(?:ая|ую|ой|ый|ое|ую|ейш))/;
const WANTS_OLD = /(?:стар|архивн|в архиве|прежн|устаревш)/;
const ARCHIVE_ID = /(?:archive|legacy|old|[-_.]v\d+$|[-_.](?:19|20)\d\d$)/;

/**
 * "актуальную, которая сейчас работает" / "старую": a choice between the current document and
 * its archived version (archive folder, or a version/year suffix on the identity). Used once the
 * classifier has said the text is an answer — the words name no folder or type themselves.
 */
export function currentOrArchived(text: string, candidates: readonly Candidate[]): string | null {
  const f = fold(text);
  const current = WANTS_CURRENT.test(f);
  const old = WANTS_OLD.test(f);
  if (current === old) return null;
  const archived = (c: Candidate) =>
    words(fold(c.folderName ?? "")).some((w) => w.startsWith("архив")) || ARCHIVE_ID.test(c.identity);
  const pick = candidates.filter((c) => archived(c) === old);
  return pick.length === 1 && pick.length < candidates.length ? pick[0]!.candidateId : null;
}

function isCancel(f: string): boolean {
  const ws = words(f);
  if (ws.length === 0) return false;
  if (CANCEL_WORDS.has(f.replace(/[.!]+$/, ""))) return true;
  // "отмени запрос", "отмена, не надо" — a cancel word first and nothing that names a new task.
  return (
    CANCEL_WORDS.has(ws[0]!) && ws.length <= 4 && !ws.slice(1).some((w) => commandOf(w) && commandOf(w) !== "mutate")
  );
}

/**
 * The code path of reply classification. A candidate click is validated by the caller against
 * the persisted snapshot before this runs (unknown ids are refused, never guessed).
 */
export function classifyReplyByCode(
  text: string,
  candidates: readonly Candidate[],
  selectedCandidateId?: string,
): CodeDecision {
  if (selectedCandidateId && candidates.some((c) => c.candidateId === selectedCandidateId)) {
    return { kind: "answer", candidateId: selectedCandidateId, by: "click" };
  }
  const f = fold(text);
  if (isCancel(f)) return { kind: "cancel", by: "command" };
  const ws = words(f);
  const hasCommand = ws.some((w) => commandOf(w) !== undefined) || /[«»„“"]/.test(text);
  if (!hasCommand && candidates.length) {
    const i = ordinalIndex(text, candidates.length);
    if (i !== null) return { kind: "answer", candidateId: candidates[i]!.candidateId, by: "ordinal" };
    const byName = candidates.filter((c) => fold(c.displayName) === f.replace(/[.!?]+$/, ""));
    if (byName.length === 1) return { kind: "answer", candidateId: byName[0]!.candidateId, by: "name" };
    const d = descriptiveChoice(text, candidates);
    if (d) return { kind: "answer", candidateId: d, by: "descriptive" };
  }
  return { kind: "free_text", hasCommand };
}

export function parseClassifierOutput(raw: unknown): ReplyKind | null {
  let v = raw;
  if (typeof raw === "string") {
    try {
      v = JSON.parse(raw);
    } catch {
      return null;
    }
  }
  const p = ClassifierOutputSchema.safeParse(v);
  return p.success ? p.data.kind : null;
}

/**
 * With no classifier verdict (it failed or is switched off), a reply that is plainly a request of
 * its own — a command verb with its own named target (a quoted name or an identity) or a typed
 * list («покажи все отчёты»), naming none of the offered candidates — is a new request and
 * supersedes the old Interaction instead of being folded into it as an answer.
 */
export function obviousNewRequest(text: string, candidates: readonly Candidate[]): boolean {
  const p = parseClause(text);
  if (readsDocumentation(p.intent) && p.implicit) return false;
  const hasCommand = words(fold(text)).some((w) => commandOf(w) !== undefined);
  if (!hasCommand) return false;
  const named = tokenizeClause(text)
    .filter((t) => t.kind === "quote" || new RegExp(`^(?:${IDENTITY_RE.source})$`, "iu").test(t.raw))
    .map((t) => fold(t.raw));
  const offered = new Set(candidates.flatMap((c) => [fold(c.displayName), fold(c.identity)]));
  if (named.length) return named.every((n) => !offered.has(n));
  return listsType(p.intent) && !!p.entityType;
}

// What a free-text clarification answer amounts to once its kind is known (pure; the
// classification effect calls it over the request's workspace index): the kind when the
// classifier gave none, and the plan updates an answer or a correction asks for.

/**
 * With no classifier verdict (it failed or is switched off), a reply that is plainly a request of
 * its own starts anew; anything else is an answer, resolved again (seed 000).
 */
export function fallbackKind(
  text: string,
  candidates: readonly Candidate[],
  why: "classifier_off" | "classifier_fallback",
) {
  const fresh = obviousNewRequest(text, candidates);
  return { kind: (fresh ? "new_request" : "answer") as ReplyKind, decidedBy: fresh ? `${why}+new_request` : why };
}

/**
 * A free-text answer or correction becomes a new mention (and type) for the task — only when it
 * names something in the current workspace; otherwise it is unclear and the question is asked again.
 */
function mentionUpdates(text: string, task: ReplyTask, index: ResolverIndex) {
  const p = parseClause(text);
  const name = p.mentions[0] ?? p.names[0];
  const given = name && !isReference(name) ? name.trim() : "";
  const newType = p.entityType ?? p.nameType;
  const retype = !!newType && newType !== task.entityType;
  // a correction of the type alone («не отчёт, а форму») keeps the name the task asked for
  const kept = !given && retype ? (task.mentions?.find((m) => !isReference(m)) ?? "") : "";
  const mention = given || kept;
  const type = newType ?? task.entityType;
  const found =
    mention && resolveMention(index, { mention, ...(type ? { entityType: type } : {}) }).status !== "not_found";
  if (!found) return [];
  return [
    ...(given ? [{ taskId: task.id, field: "mention", value: mention }] : []),
    ...(retype ? [{ taskId: task.id, field: "entityType", value: newType }] : []),
  ] as PlanUpdate[];
}

type ReplyTask = { id: string; entityType: string | undefined; mentions?: readonly string[] };

/**
 * The updates of a classified reply: an answer is resolved against the closed list first
 * ("актуальную" → the non-archived candidate), then against the workspace as a new mention; a
 * correction only against the workspace (which needs the task as planned). Other kinds: none.
 */
export function replyUpdates(
  r: { kind: ReplyKind; text: string; candidates: readonly Candidate[]; taskId: string },
  task: ReplyTask | null,
  index: ResolverIndex,
): { candidateId: string | null; updates: PlanUpdate[] } {
  const chosen =
    r.kind === "answer" ? (descriptiveChoice(r.text, r.candidates) ?? currentOrArchived(r.text, r.candidates)) : null;
  if (chosen)
    return { candidateId: chosen, updates: [{ taskId: r.taskId, field: "resolvedEntity", candidateId: chosen }] };
  const answers = (r.kind === "answer" || r.kind === "correction") && task !== null;
  return { candidateId: null, updates: answers ? mentionUpdates(r.text, task, index) : [] };
}
