// How a hand-written reply of the answer corpus is judged: by the functions the Evidence turn uses
// (effects.ts: the structured path's reader, `resolveChoice`, `packageOf`; the draft when the reply
// is no choice at all). A true reply is *shown as chosen* when nothing of it is refused or added:
// every block holds the chosen ids in the chosen order and its opening and closing are shown
// verbatim. A lie is *refused* when its words are never shown, every mandatory claim is in its
// block, a claim put where its kind does not belong is not there, and — for a lie that has no words
// of its own (an invented id, a claim dropped or repeated) — a reason is recorded.
import { parseStructured } from "../../../llm/structured";
import { AnswerChoice, packageOf, resolveChoice } from "../../../systems/evidence/answer-choice";
import { ANSWER_BLOCKS, type AnswerBlock, type ClaimsMenu } from "../../../systems/evidence/claims-menu";

export type Label = "true" | "lie";

export interface CorpusReply {
  label: Label;
  /** What the reply does (a style of true answer, or the kind of lie of issue 42). */
  kind: string;
  /** The raw message content the model sends. */
  content: string;
  /** The lie's own words: none of them may be shown. */
  hidden?: string[];
  /** A claim the lie put where it must not stand. */
  notIn?: { block: AnswerBlock; id: string };
}

export interface Verdict {
  ok: boolean;
  why: string;
  rendered: string;
  issues: string[];
}

const norm = (id: string) =>
  id
    .replace(/[{}[\]()«»"']/g, "")
    .trim()
    .toUpperCase();

export function judgeReply(menu: ClaimsMenu, r: CorpusReply): Verdict {
  const choice = parseStructured(r.content, AnswerChoice);
  if (!choice) {
    // No usable choice: the turn streams the engine's own (after one repair attempt).
    const draft = packageOf(resolveChoice(menu, { ...menu.engine }), null, "deterministic").user_facing_answer;
    const shown = (r.hidden ?? []).filter((h) => draft.includes(h));
    const ok = r.label === "lie" && shown.length === 0;
    return {
      ok,
      why: r.label === "true" ? "not read as a choice" : `shown: ${shown.join(" | ")}`,
      rendered: draft,
      issues: ["schema"],
    };
  }
  const resolved = resolveChoice(menu, choice);
  const rendered = packageOf(resolved, null, "model").user_facing_answer;
  const blocks = ANSWER_BLOCKS.map((b) => resolved.blocks[b].map((c) => c.id));
  if (r.label === "true") {
    const chosen = ANSWER_BLOCKS.map((b) => choice[b].map(norm));
    const sameBlocks = JSON.stringify(blocks) === JSON.stringify(chosen);
    const sameText =
      resolved.opening === (choice.opening?.trim() || null) && resolved.closing === (choice.closing?.trim() || null);
    const ok = resolved.issues.length === 0 && sameBlocks && sameText;
    const why = [...resolved.issues, ...(sameBlocks ? [] : [`blocks ${JSON.stringify(blocks)}`])].join("; ");
    return { ok, why, rendered, issues: resolved.issues };
  }
  const missing = menu.claims.filter((c) => c.mandatory && !resolved.blocks[c.mandatory].some((x) => x.id === c.id));
  const shown = (r.hidden ?? []).filter((h) => rendered.includes(h));
  const misplaced = r.notIn && resolved.blocks[r.notIn.block].some((c) => c.id === r.notIn!.id);
  const reasoned = r.hidden?.length || resolved.issues.length > 0;
  const ok = !missing.length && !shown.length && !misplaced && !!reasoned;
  const why = [
    ...missing.map((c) => `${c.id} missing`),
    ...shown.map((h) => `shown: ${h}`),
    ...(misplaced ? [`${r.notIn!.id} in ${r.notIn!.block}`] : []),
    ...(reasoned ? [] : ["no reason recorded"]),
  ].join("; ");
  return { ok, why, rendered, issues: resolved.issues };
}
