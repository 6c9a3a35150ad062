// Legacy: the answer of a turn logged before the claims menu (doc/evidence.md), when the model
// wrote prose in the slot contract and the closed-world checker judged it. Such a logged event
// replays through that same check, so an old conversation's log still reaches its snapshot. The
// package's blocks, short answer and claims are read from the rendered text, so it never says one
// thing in `user_facing_answer` and another in `short_answer` / `blocks` / `claims`.
import { splitSentences } from "../../driver/validated-stream";
import type { Claim, FinalAnswerPackage } from "./artifacts";
import { checkAnswer, createClaimChecker } from "./claim-check";
import { BLOCK_TITLES } from "./compose";
import type { AnswerOutcome, TurnWork } from "./conversation-types";

/** A logged prose answer: shown rendered if every sentence passed the slot contract, else the draft. */
export function legacyProse(w: TurnWork, text: string, released: string, gateIssues: string[]): AnswerOutcome {
  const draft = w.draft!;
  const checked = checkAnswer(
    text,
    createClaimChecker({
      bundle: w.bundle,
      coverage: w.coverage!,
      outcome: w.coverage!.outcome,
      frame: w.frame,
      draft,
    }),
  );
  const issues = [...new Set([...gateIssues, ...checked.issues])];
  const ok = checked.ok && gateIssues.length === 0;
  const answer = ok ? modelPackage(checked.rendered, draft) : draft;
  return {
    answer,
    validation: { ok, issues, citations: checked.citations },
    replacement: !ok
      ? { text: answer.user_facing_answer, reason: "validation_failed", issues }
      : released && released !== answer.user_facing_answer
        ? { text: answer.user_facing_answer, reason: "model_failed", issues: [] }
        : null,
    rejected: ok ? null : { text, released, issues },
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** The five blocks' bodies, in order; null when one is missing. */
export function splitBlocks(text: string): string[] | null {
  const found: { start: number; end: number }[] = [];
  let from = 0;
  for (const t of BLOCK_TITLES) {
    const head = t.split(" / ")[0]!;
    const re = new RegExp(`\\*{0,2}${escape(head)}[^\\n*.:]*[.:]?\\*{0,2}[.:]?`, "giu");
    re.lastIndex = from;
    const m = re.exec(text);
    if (!m) return null;
    found.push({ start: m.index, end: m.index + m[0].length });
    from = m.index + m[0].length;
  }
  return found.map((f, i) => text.slice(f.end, found[i + 1]?.start ?? text.length).trim());
}

const items = (body: string) =>
  body
    .split("\n")
    .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, "").trim())
    .filter(Boolean);

export function modelPackage(text: string, draft: FinalAnswerPackage): FinalAnswerPackage {
  const parts = splitBlocks(text);
  if (!parts)
    return {
      ...draft,
      user_facing_answer: text,
      short_answer: text.split("\n")[0]!.replace(/\*\*/g, "").trim(),
      composed_by: "model",
    };
  const [direct, checked, found, notEstablished, next] = parts as [string, string, string, string, string];
  const blocks: FinalAnswerPackage["blocks"] = {
    direct: direct.replace(/\s+/g, " "),
    checked: items(checked),
    found: items(found),
    not_established: items(notEstablished),
    next_step: items(next),
  };
  const claims: Claim[] = [];
  const add = (body: string, unknown: boolean) => {
    const { complete, rest } = splitSentences(body.replace(/\*\*/g, ""));
    for (const s of [...complete, rest].map((x) => x.trim()).filter(Boolean)) {
      const ids = [...new Set([...s.matchAll(/\[(F\d+)\]/g)].map((m) => m[1]!))];
      claims.push({
        claim_id: `K${claims.length}`,
        text: s,
        kind: ids.length ? "evidence" : unknown ? "unknown" : "inference",
        evidence_ids: ids,
      });
    }
  };
  add(direct, false);
  add(found, false);
  add(notEstablished, true);
  return {
    short_answer: blocks.direct,
    user_facing_answer: text,
    blocks,
    evidence_summary: blocks.found,
    limitations: blocks.not_established,
    clarifying_question: draft.clarifying_question,
    claims,
    composed_by: "model",
  };
}
