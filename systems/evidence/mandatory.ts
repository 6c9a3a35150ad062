// What an answer must show whatever a model writes (issue 42, item 6): after a tool fault the
// checks left undone and the step they call for are named in the CoverageReport
// (`coverage.mandatory`, set by the rules, kept by the critic), and an answer that leaves one out
// is incomplete — «Ничего уточнять не нужно» after two faults is a lie by omission. Pure helpers
// for the answer's renderer and checker.
import type { CoverageReport, FinalAnswerPackage } from "./artifacts";
import { render } from "./compose";

export interface MandatoryItems {
  not_established: string[];
  next_step: string[];
}

export function mandatoryItems(c: CoverageReport): MandatoryItems {
  return { not_established: c.mandatory?.not_established ?? [], next_step: c.mandatory?.next_step ?? [] };
}

/** Text compared as the user reads it: no Markdown emphasis, one space, no case. */
const plain = (s: string) =>
  s
    .replace(/\*\*|__|`/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase()
    .replace(/ё/g, "е");

/** The mandatory items a shown answer leaves out (empty: it names them all). */
export function missingMandatory(text: string, c: CoverageReport): string[] {
  const t = plain(text);
  const m = mandatoryItems(c);
  return [...m.not_established, ...m.next_step].filter((x) => !t.includes(plain(x)));
}

/** A package with every mandatory item in its block (added where missing), its text rendered again. */
export function withMandatory(p: FinalAnswerPackage, c: CoverageReport): FinalAnswerPackage {
  const missing = new Set(missingMandatory(p.user_facing_answer, c));
  if (!missing.size) return p;
  const m = mandatoryItems(c);
  // A block that says nothing is left to do cannot stand next to a check that was not done.
  const nothing = /^(?:ничего уточнять не нужно|пробелов не обнаружено)\.?$/i;
  const add = (xs: string[], must: string[]) => [
    ...xs.filter((x) => !nothing.test(x.trim())),
    ...must.filter((x) => missing.has(x)),
  ];
  const blocks = {
    ...p.blocks,
    not_established: add(p.blocks.not_established, m.not_established),
    next_step: add(p.blocks.next_step, m.next_step),
  };
  return { ...p, blocks, limitations: blocks.not_established, user_facing_answer: render(blocks) };
}
