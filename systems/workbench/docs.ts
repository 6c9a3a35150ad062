// Stage 05: deterministic documentation retrieval. Markdown pages are split by headings into
// sections, ranked with BM25 over stemmed Russian tokens, deduplicated and cut to a token budget.
// The model may only propose extra search expressions; choosing fragments is ours.
import { sha256Hex } from "./canonical";
import { stem } from "./stem";
import { estimateTokens, fold, words } from "./text";

export interface DocPage {
  /** Path relative to DOCS_DIR, e.g. "clarifications.md". */
  path: string;
  markdown: string;
}

export interface DocSection {
  docId: string;
  path: string;
  heading: string;
  /** Heading path, e.g. "Уточняющие вопросы ассистента > Как ответить". */
  headingPath: string;
  text: string;
  terms: string[];
  hash: string;
}

export interface DocFragment {
  docId: string;
  heading: string;
  text: string;
  score: number;
}

export interface DocsIndex {
  sections: DocSection[];
  df: Map<string, number>;
  avgLen: number;
  version: string;
}

// Function words carry no topic; dropping them keeps BM25 from matching on "как" or "на".
const STOPWORDS = new Set(
  "и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при наконец два об другой хоть после над больше тот через эти нас про всего них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между это объясни объясните расскажи расскажите покажи покажите найди найдите перечисли поясни подскажи пожалуйста затем потом также".split(
    " ",
  ),
);

export function docTerms(text: string): string[] {
  return words(fold(text))
    .filter((w) => w.length > 1 && !STOPWORDS.has(w))
    .map(stem);
}

export function splitMarkdown(page: DocPage): DocSection[] {
  const base = page.path.replace(/\.md$/i, "");
  const out: DocSection[] = [];
  const stack: { level: number; title: string }[] = [];
  let cur: { heading: string; path: string; lines: string[] } | null = null;
  const flush = () => {
    if (!cur) return;
    const body = cur.lines.join("\n").trim();
    if (body) {
      const text = body;
      out.push({
        docId: `${base}#${slug(cur.heading)}`,
        path: page.path,
        heading: cur.heading,
        headingPath: cur.path,
        text,
        terms: docTerms(`${cur.path}\n${text}`),
        hash: sha256Hex(fold(text)),
      });
    }
  };
  let inFence = false;
  for (const line of page.markdown.split(/\r?\n/)) {
    if (/^```/.test(line)) inFence = !inFence;
    const m = !inFence && /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (m) {
      flush();
      const level = m[1]!.length;
      while (stack.length && stack.at(-1)!.level >= level) stack.pop();
      stack.push({ level, title: m[2]! });
      cur = { heading: m[2]!, path: stack.map((s) => s.title).join(" > "), lines: [] };
    } else {
      cur ??= { heading: base, path: base, lines: [] };
      cur.lines.push(line);
    }
  }
  flush();
  return out;
}

function slug(s: string): string {
  return (
    fold(s)
      .replace(/[^\p{L}\p{N}]+/gu, "-")
      .replace(/^-|-$/g, "") || "section"
  );
}

export function buildDocsIndex(pages: readonly DocPage[]): DocsIndex {
  const sections = pages.flatMap(splitMarkdown);
  const df = new Map<string, number>();
  for (const s of sections) for (const t of new Set(s.terms)) df.set(t, (df.get(t) ?? 0) + 1);
  const avgLen = sections.reduce((a, s) => a + s.terms.length, 0) / Math.max(1, sections.length);
  const version = sha256Hex(
    pages
      .map((p) => `${p.path}\n${p.markdown}`)
      .sort()
      .join("\u0000"),
  ).slice(0, 16);
  return { sections, df, avgLen, version };
}

const K1 = 1.2;
const B = 0.75;

export function bm25(index: DocsIndex, queryTerms: readonly string[]): Array<{ section: DocSection; score: number }> {
  const n = index.sections.length;
  const q = [...new Set(queryTerms)];
  const scored = index.sections.map((section) => {
    let score = 0;
    const len = section.terms.length;
    for (const t of q) {
      const df = index.df.get(t);
      if (!df) continue;
      let tf = 0;
      for (const x of section.terms) if (x === t) tf++;
      if (!tf) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / (index.avgLen || 1)));
    }
    return { section, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.section.docId.localeCompare(b.section.docId));
}

export interface RetrieveOptions {
  /** Extra search expressions (e.g. proposed by the planner) — ranked the same way. */
  extraQueries?: readonly string[];
  tokenBudget?: number;
  maxFragments?: number;
  /** A fragment must score at least this share of the best one. */
  relativeFloor?: number;
  /** Below this even the best section is noise (it matched only words most sections share). */
  minScore?: number;
}

export interface RetrieveResult {
  fragments: DocFragment[];
  considered: number;
  droppedDuplicates: number;
  droppedByBudget: number;
  queryTerms: string[];
}

export function retrieveDocs(index: DocsIndex, query: string, opts: RetrieveOptions = {}): RetrieveResult {
  const budget = opts.tokenBudget ?? 1500;
  const max = opts.maxFragments ?? 4;
  const floor = opts.relativeFloor ?? 0.35;
  const minScore = opts.minScore ?? 1;
  const queryTerms = [...new Set([query, ...(opts.extraQueries ?? [])].flatMap(docTerms))];
  const ranked = bm25(index, queryTerms);
  const best = ranked[0]?.score ?? 0;
  const seen = new Set<string>();
  const out: DocFragment[] = [];
  let used = 0;
  let droppedDuplicates = 0;
  let droppedByBudget = 0;
  for (const { section, score } of ranked) {
    if (score < best * floor || score < minScore || out.length >= max) break;
    if (seen.has(section.hash)) {
      droppedDuplicates++;
      continue;
    }
    const cost = estimateTokens(section.text) + estimateTokens(section.headingPath);
    if (used + cost > budget) {
      droppedByBudget++;
      continue;
    }
    seen.add(section.hash);
    used += cost;
    out.push({
      docId: section.docId,
      heading: section.headingPath,
      text: section.text,
      score: Math.round(score * 1000) / 1000,
    });
  }
  return { fragments: out, considered: ranked.length, droppedDuplicates, droppedByBudget, queryTerms };
}
