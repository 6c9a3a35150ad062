// Legacy: the Evidence answer check of the slot contract (issue 31), kept for answers logged before
// the claims menu (issue 42), which replay through it (answer-package.ts `legacyProse`), and proved by
// the lie generator. New answers are a choice over the claims menu (answer-choice.ts). In this
// contract the model selects and orders what the engine established and writes connective text;
// every factual token is a slot rendered from this run's artifacts (answer-slots.ts), and any word
// outside the closed connective vocabulary refuses the sentence (driver/closed-text.ts). Pure.
import { judgeSentence, type ClosedTextRules, type SentenceVerdict } from "../../driver/closed-text";
import type { AnswerChecker } from "../../driver/validated-stream";
import { splitSentences } from "../../driver/validated-stream";
import { createSlotResolver, oneFactPerSentence } from "./answer-slots";
import type { CoverageReport, EvidenceBundle, FinalAnswerPackage, QueryFrame } from "./artifacts";
import { BLOCK_TITLES } from "./compose";
import type { OutcomeClass } from "./reason-codes";

export interface ClaimCheckInput {
  bundle: EvidenceBundle;
  coverage: CoverageReport;
  outcome: OutcomeClass;
  frame: QueryFrame | null;
  /** The package the engine composed from the evidence: its claims and blocks are slots too. */
  draft: FinalAnswerPackage;
}

/** The block headings the answer format has, as the model writes them. */
export const HEADINGS = BLOCK_TITLES.map((t) => `**${t}.**`);

export function evidenceRules(input: ClaimCheckInput): ClosedTextRules {
  return {
    resolve: createSlotResolver({ bundle: input.bundle, draft: input.draft }),
    headings: HEADINGS,
    sentence: oneFactPerSentence,
  };
}

/** What only the whole text shows: the composed blocks are all there, and the conclusion is the engine's. */
function checkWhole(text: string, draft: FinalAnswerPackage): string[] {
  const issues = HEADINGS.filter((h, k) => draftHas(draft, k) && !text.includes(h)).map((h) => `нет блока ${h}`);
  // The short answer is the conclusion the outcome class allows; the model may not replace it
  // with a selection of facts that reads as a different conclusion.
  if (!/\{K0\}/.test(text)) issues.push("нет вывода {K0}: краткий ответ берётся из отчёта о покрытии");
  return issues;
}

const draftHas = (d: FinalAnswerPackage, block: number) =>
  block === 0 ||
  [d.blocks.checked, d.blocks.found, d.blocks.not_established, d.blocks.next_step][block - 1]!.length > 0;

export interface EvidenceChecker extends AnswerChecker {
  render(sentence: string): string;
}

export function createClaimChecker(input: ClaimCheckInput): EvidenceChecker {
  const rules = evidenceRules(input);
  // The stream asks for a sentence's verdict, then for its rendering: judge once.
  const seen = new Map<string, SentenceVerdict>();
  const judge = (s: string) => {
    let v = seen.get(s);
    if (!v) seen.set(s, (v = judgeSentence(s, rules)));
    return v;
  };
  return {
    sentence: (text) => judge(text).issues,
    render: (text) => judge(text).rendered,
    whole: (text) => checkWhole(text, input.draft),
  };
}

export interface AnswerValidation {
  ok: boolean;
  issues: string[];
  citations: string[];
}

/** The whole text through the checker, sentence by sentence and as a whole (what the stream gate does, at once). */
export function checkAnswer(
  text: string,
  checker: EvidenceChecker,
): AnswerValidation & {
  /** The answer as the user sees it (slots rendered); empty when refused. */
  rendered: string;
} {
  const { complete, rest } = splitSentences(text);
  const sentences = [...complete, rest];
  const issues = sentences.filter((s) => s.trim()).flatMap((s) => checker.sentence(s));
  issues.push(...checker.whole(text));
  const ok = issues.length === 0;
  const rendered = ok ? sentences.map((s) => (s.trim() ? checker.render(s) : s)).join("") : "";
  const citations = [...new Set([...rendered.matchAll(/\[(F\d+)\]/g)].map((m) => m[1]!))];
  return { ok, issues: [...new Set(issues)], citations, rendered };
}
