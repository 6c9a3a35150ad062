// Documents named by display name (issue 42): a model that invents a document rarely writes an
// identity — it writes «форма «Учёт клиентов»» or «отчёт Продажи За Квартал». A name the answer
// gives a document (after a type noun, in quotes or in Title Case) must be a document of the
// workspace, or at least a name the passed context spells (the user's own request naming a
// document that does not exist, a related document a description mentions).
import { typeOf } from "./lexicon";
import { bestReading } from "./morph";
import { ANSWER_PROMPT } from "./prompts";
import type { ModelRequest } from "./model-request";
import { stem } from "./stem";
import { fold, words } from "./text";

/** Nouns that introduce a document's name besides the typed ones (форма, отчёт…). */
const DOCUMENT_NOUNS =
  /^(?:документ(?:а|у|ом|е|ы|ов|ам|ами|ах)?|(?:document|form|report|composition|entity|folder|process)s?)$/u;
const QUOTED = /«([^»\n]{1,120})»|„([^“”\n]{1,120})[“”]|“([^”\n]{1,120})”|"([^"\n]{1,120})"/gu;
/** A capitalised word (Cyrillic or Latin), the start of an unquoted Title Case name. */
const CAPITALISED = /^[A-ZА-ЯЁ][\p{L}\d-]*$/u;

const isDocumentNoun = (w: string) => !!typeOf(fold(w)) || DOCUMENT_NOUNS.test(fold(w));
/**
 * Any Russian noun by its likeliest reading: a capitalised name standing right after one is that
 * thing's name — «в разделе «Зависимости отчётов»», «в справочнике Тарифная Сетка» — whatever the
 * noun (a section, a reference book, a wizard: none of them is in the workspace or the context).
 */
const isNoun = (w: string) => /[а-яё]/iu.test(w) && bestReading(w)?.pos === "NOUN";
/** A name, not a quoted word of another kind: «Сохранить» on a button is a verb, «Макет формы» a title. */
const nominal = (name: string) => {
  const first = name.match(/^[A-ZА-ЯЁ][\p{L}-]*/u)?.[0];
  const pos = first && /[а-яё]/iu.test(first) ? bestReading(first)?.pos : undefined;
  return !!first && (pos === undefined || pos === "NOUN" || pos === "ADJF");
};
const stems = (s: string) => words(fold(s)).map(stem).join(" ");

/** Every string of the context the model was shown: names it may repeat. */
export function contextText(req: ModelRequest): string {
  // the instructions name the product («Endge Configurator», «Workspace»): not documents either
  const parts: string[] = [ANSWER_PROMPT.text, req.request];
  const walk = (v: unknown): void => {
    if (typeof v === "string") parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(req.context);
  for (const m of req.conversation) parts.push(m.text);
  for (const c of req.clarifications ?? []) parts.push(c.question, c.answer);
  for (const n of req.notices ?? []) parts.push(n);
  return parts.join("\n");
}

/** A lookup of names the answer may give documents: the workspace's (when known) and the context's. */
export function nameLookup(
  req: ModelRequest | undefined,
  workspaceHas?: (name: string) => boolean,
): (name: string) => boolean {
  const text = req ? stems(contextText(req)) : "";
  return (name) => {
    const key = stems(name);
    if (!key) return true;
    if (workspaceHas?.(name)) return true;
    return !!text && ` ${text} `.includes(` ${key} `);
  };
}

/** Display names the answer gives documents that no document of the workspace or the context bears. */
export function inventedDocuments(answer: string, known: (name: string) => boolean): string[] {
  const out = new Set<string>();
  const text = answer.replace(/\[\[[^\]]*\]\]|`[^`]*`/g, " ");
  // «…» after a document noun (up to two words between: «форму с названием «X»»), or joined to such a
  // name by a conjunction or a comma («отчёты «A» и «B»»)
  let previous: { end: number; named: boolean } | undefined;
  for (const m of text.matchAll(QUOTED)) {
    const name = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? "").trim();
    const before = text.slice(Math.max(0, m.index! - 60), m.index!).match(/[\p{L}]+/gu) ?? [];
    const gap = previous ? text.slice(previous.end, m.index!) : "";
    const joined = !!previous?.named && /^[\s,]*(?:(?:и|или|а также|and|or)\s*)?$/iu.test(gap);
    const named =
      before.slice(-3).some(isDocumentNoun) || joined || (nominal(name) && !!before.length && isNoun(before.at(-1)!));
    if (named && !known(name)) out.add(name);
    previous = { end: m.index! + m[0].length, named };
  }
  // unquoted Title Case after a document noun: «форма Учёт Клиентов», "the report Sales Summary"
  const unquoted = text.replace(QUOTED, " ¶ ");
  for (const line of unquoted.split(/[.!?;:\n()]/)) {
    const ws = line.split(/[\s,]+/).filter(Boolean);
    for (let i = 0; i < ws.length - 1; i++) {
      const typed = isDocumentNoun(ws[i]!);
      if (!typed && !isNoun(ws[i]!)) continue;
      const run: string[] = [];
      // a run of capitalised words, with the lower-case prepositions a title keeps («Остатки По Отделам», «Учёт в Срок»)
      for (let j = i + 1; j < ws.length && CAPITALISED.test(ws[j]!); j++) run.push(ws[j]!);
      // after a document noun one capitalised word is a name («форма Отгрузка»); after any other noun
      // a title takes two («в разделе Мастер Уточнений»), one is a proper noun («документации Endge»)
      if (run.length < (typed ? 1 : 2)) continue;
      if (!known(run.join(" ")) && !knownPrefix(run, known)) out.add(run.join(" "));
      // the title's own words are not heads of further titles
      i += run.length;
    }
  }
  return [...out];
}

/**
 * The run is a known name followed by one more capitalised word («форма Отгрузка Логистики»:
 * «Отгрузка» and its folder). A longer tail is a title of its own: «Остатки Отпусков По Отделам»
 * is not the document «Остатки» however many words it shares with the context.
 */
function knownPrefix(run: string[], known: (name: string) => boolean): boolean {
  return run.length >= 2 && known(run.slice(0, -1).join(" "));
}
