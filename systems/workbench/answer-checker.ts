// The Workbench's stage 12 as a stream gate's checker (driver/validated-stream.ts): the same
// validateResponse, run on each sentence before it reaches the client and on the whole answer at
// the end. Whatever validateResponse checks, the gate enforces — this file only decides which
// checks make sense on a fragment.
import { splitSentences, type AnswerChecker } from "../../driver/validated-stream";
import { offlineAnswer } from "./offline-answer";
import type { ModelRequest } from "./model-request";
import { validateResponse, type ValidationIssue, type ValidationResult } from "./validate-response";

export type ValidateOptions = Parameters<typeof validateResponse>[1];

// Properties of the whole text, not of a sentence: a sentence is not "empty" or "too long" or
// "raw JSON", and a citation cut by a sentence boundary ("[[a. b]]") is judged whole.
const WHOLE_ONLY = new Set<ValidationIssue["code"]>(["empty_answer", "too_long", "raw_json", "malformed_citation"]);

/** How an issue reads in `answer_replaced.issues` (code first: the operator page shows it as is). */
export const issueText = (i: ValidationIssue): string => (i.detail ? `${i.code}: ${i.detail}` : i.code);

export interface WorkbenchChecker extends AnswerChecker {
  /** The structured issues that made the gate reject (sentence or whole), in order. */
  readonly rejected: ValidationIssue[];
}

export function workbenchAnswerChecker(opts: ValidateOptions): WorkbenchChecker {
  const rejected: ValidationIssue[] = [];
  const take = (issues: ValidationIssue[]): string[] => {
    rejected.push(...issues);
    return issues.map(issueText);
  };
  return {
    rejected,
    sentence: (s) => take(validateResponse(s, opts).issues.filter((i) => !WHOLE_ONLY.has(i.code))),
    whole: (t) => take(validateResponse(t, opts).issues),
  };
}

/**
 * The final validation of a gated answer: the whole-text check, plus what the gate rejected on a
 * sentence (a fragment's issue the whole text would also show is kept once).
 */
export function gatedValidation(
  text: string,
  opts: ValidateOptions,
  gateRejected: readonly ValidationIssue[],
): ValidationResult {
  const whole = validateResponse(text, opts);
  const issues = [...whole.issues];
  const seen = new Set(issues.map(issueText));
  for (const i of gateRejected) {
    if (seen.has(issueText(i))) continue;
    seen.add(issueText(i));
    issues.push(i);
  }
  return { ok: issues.length === 0, issues, citations: whole.citations };
}

/** What the user reads when the answer was rejected and no valid replacement can be built. */
export const REJECTED_NOTICE =
  "Ответ модели не прошёл автоматическую проверку и не показан. Попробуйте переформулировать запрос или повторить его.";

const REPLACEMENT_INTRO =
  "Ответ модели не прошёл автоматическую проверку и не показан; ниже — найденные данные без пересказа.";

/**
 * The text the Workbench shows instead of a rejected answer: the deterministic rendering of the
 * prepared context (it cites only what was passed to the model), introduced by a line saying why.
 * It must pass the same validation itself, yet it quotes text the Workbench does not control (the
 * user's request, the documents' descriptions), which may read like a claim or name a document
 * that was not passed: each sentence that fails is left out, and if no line of data is left, the
 * plain notice is shown.
 */
export function replacementAnswer(req: ModelRequest, opts: ValidateOptions): string {
  const passes = (s: string) => validateResponse(s, opts).ok;
  const kept: string[] = [];
  let data = 0;
  for (const line of offlineAnswer(req).split("\n")) {
    // The heading quotes the user's request: whole or not at all.
    if (!line.startsWith("- ")) {
      if (passes(line)) kept.push(line);
      continue;
    }
    const { complete, rest } = splitSentences(line);
    const sentences = [...complete, rest].filter((x) => x.trim());
    const good = sentences.filter(passes);
    // A data line whose first sentence (the document itself) failed says nothing reliable.
    if (!good.length || good[0] !== sentences[0]) continue;
    kept.push(good.join("").trimEnd());
    data++;
  }
  const text = `${REPLACEMENT_INTRO}\n${kept.join("\n")}`;
  return data > 0 && passes(text) ? text : REJECTED_NOTICE;
}
