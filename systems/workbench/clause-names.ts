// The names a clause gives: a folder scope («в папке «Продажи»»), an unquoted name left after the
// command, type and filler words, and whether a token is an identity. Split from plan.ts (stage 03).
import type { Token } from "./clause";
import { commandOf, EDGE_PREPOSITIONS, FILLERS, QUESTION_WORDS, typeOf, type CommandKind } from "./lexicon";
import { IDENTITY_RE, UUID_RE } from "./text";

const FOLDER_PREPS = new Set(["в", "во", "из", "внутри"]);
/** "содержимое папки X", "документы папки X": the folder is a scope, the request a list. */
const CONTENTS_WORDS = new Set(["содержимое", "содержание", "состав", "документы", "список", "перечень"]);
const STOP_AFTER_NAME = new Set(["и", "а", "или", "затем", "потом", "где", "которые", "который", "которая"]);

export function isIdentity(raw: string): boolean {
  return new RegExp(`^(?:${IDENTITY_RE.source})$`, "iu").test(raw) || new RegExp(`^${UUID_RE.source}$`, "i").test(raw);
}

/** "в папке «Продажи»", "из папки Архив", or (list intents) "содержимое папки «Продажи»". */
export function takeFolderScope(
  tokens: Token[],
  used: Set<number>,
  command: CommandKind | undefined,
): string | undefined {
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i]!;
    const next = tokens[i + 1]!;
    const prepPhrase = t.kind === "word" && FOLDER_PREPS.has(t.f) && typeOf(next.f) === "Folder";
    const genitive =
      t.kind === "word" && typeOf(t.f) === "Folder" && /и$/.test(t.f) && CONTENTS_WORDS.has(tokens[i - 1]?.f ?? "");
    const at = prepPhrase ? i + 2 : genitive ? i + 1 : -1;
    if (at < 0) continue;
    const name = takeName(tokens, at);
    if (!name) continue;
    for (let k = prepPhrase ? i : i - 1; k < at + name.count; k++) used.add(k);
    if (!prepPhrase) used.add(i - 1);
    return name.text;
  }
  return undefined;
}

function takeName(tokens: Token[], at: number): { text: string; count: number } | undefined {
  const first = tokens[at];
  if (!first) return undefined;
  if (first.kind === "quote") return { text: first.raw, count: 1 };
  const parts: string[] = [];
  for (let k = at; k < tokens.length && parts.length < 3; k++) {
    const t = tokens[k]!;
    if (t.kind !== "word" || STOP_AFTER_NAME.has(t.f) || commandOf(t.f) || typeOf(t.f)) break;
    parts.push(t.raw);
  }
  return parts.length ? { text: parts.join(" "), count: parts.length } : undefined;
}

/** An unquoted name: the words left after commands, types, references and fillers. */
export function residualMention(tokens: Token[], used: Set<number>): string | undefined {
  const words = tokens
    .map((t, i) => ({ t, i }))
    .filter(({ t, i }) => !used.has(i) && t.kind === "word" && !FILLERS.has(t.f) && !QUESTION_WORDS.has(t.f));
  while (words.length && EDGE_PREPOSITIONS.has(words[0]!.t.f)) words.shift();
  while (words.length && EDGE_PREPOSITIONS.has(words.at(-1)!.t.f)) words.pop();
  const text = words
    .map(({ t }) => t.raw)
    .join(" ")
    .trim();
  return text || undefined;
}
