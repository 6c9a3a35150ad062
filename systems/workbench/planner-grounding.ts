// Is a planner mention grounded in what the user actually wrote? A mention must be found in the
// request (by folded text or by stems — the planner may change a word's case), or be a pronoun /
// reference word that the request contains.
import type { Normalized } from "./normalize";
import { PRONOUNS } from "./lexicon";
import { stem } from "./stem";
import { fold, words } from "./text";
import { skeletonWord } from "./translit";

export class MentionGrounding {
  private readonly folded: string;
  private readonly stems: Set<string>;
  private readonly skeletons: Set<string>;
  private readonly requestWords: Set<string>;

  constructor(norm: Normalized) {
    this.folded = norm.folded;
    this.requestWords = new Set(words(norm.folded));
    this.stems = new Set([...this.requestWords].map(stem));
    this.skeletons = new Set([...this.requestWords].map(skeletonWord));
  }

  isPronoun(m: string): boolean {
    const ws = words(fold(m));
    return (
      ws.length > 0 &&
      ws.every(
        (w) => PRONOUNS[w] !== undefined || /^(?:эт|предыдущ|прошл)/.test(w) || w === "композиция" || w === "сущность",
      )
    );
  }

  typedIdentity(m: string): boolean {
    return this.folded.includes(fold(m));
  }

  grounded(m: string): boolean {
    const f = fold(m);
    if (!f) return false;
    if (this.folded.includes(f)) return true;
    const ws = words(f);
    if (ws.every((w) => this.requestWords.has(w) || this.stems.has(stem(w)) || this.skeletons.has(skeletonWord(w))))
      return true;
    return this.isPronoun(m) && ws.some((w) => this.requestWords.has(w));
  }
}
