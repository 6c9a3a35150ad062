import { describe, expect, it } from "vitest";
import { syntheticWorkspace } from "../../../bench/resolve";
import {
  buildIndex,
  contentIndex,
  contentText,
  skeletonIndex,
  typoIndex,
  type ResolverIndex,
} from "../../../systems/workbench/resolve-index";
import { stem } from "../../../systems/workbench/stem";
import { fold, words } from "../../../systems/workbench/text";
import { skeletonWord } from "../../../systems/workbench/translit";
import type { WorkspaceDocument, WorkspaceSnapshot } from "../../../systems/workbench/types";
import { workspace } from "./fixtures";

// The index build reads words by character code, interns them and keeps typo deletions as integer
// tables. This is the plain version it replaced (strings, Maps, one merge per key), kept as the
// reference: the fast build must give the same index, Map orders included.
function push(m: Map<string, number[]>, k: string, i: number): void {
  const a = m.get(k);
  if (a === undefined) m.set(k, [i]);
  else if (a[a.length - 1] !== i) a.push(i);
}

function regroup(byWord: Map<string, number[]>, key: (w: string) => string): Map<string, number[]> {
  const groups = new Map<string, number[][]>();
  for (const [w, postings] of byWord) {
    const k = key(w);
    groups.set(k, [...(groups.get(k) ?? []), postings]);
  }
  const out = new Map<string, number[]>();
  for (const [k, lists] of groups)
    out.set(
      k,
      [...new Set(lists.flat())].sort((a, b) => a - b),
    );
  return out;
}

function reference(snapshot: WorkspaceSnapshot) {
  const docs = snapshot.documents.map((doc) => {
    const nameWords = words(fold(doc.displayName));
    return { doc, identityKey: fold(doc.identity), nameKey: nameWords.join(" "), nameWords };
  });
  const byIdentity = new Map<string, number>();
  const byWord = new Map<string, number[]>();
  const children = new Map<string, number[]>();
  const types = new Set<string>();
  docs.forEach((d, i) => {
    types.add(d.doc.documentType);
    byIdentity.set(d.identityKey, i);
    for (const w of d.nameWords) push(byWord, w, i);
    if (d.doc.folderIdentity) push(children, d.doc.folderIdentity, i);
  });
  const deletes = new Map<string, string[]>();
  const vocabByFirst = new Map<string, string[]>();
  for (const w of byWord.keys()) {
    if (w.length < 5) continue;
    for (let j = 0; j < w.length; j++) {
      const k = w.slice(0, j) + w.slice(j + 1);
      const a = deletes.get(k) ?? [];
      if (!a.includes(w)) deletes.set(k, [...a, w]);
    }
    vocabByFirst.set(w[0]!, [...(vocabByFirst.get(w[0]!) ?? []), w]);
  }
  const byContentWord = new Map<string, number[]>();
  docs.forEach((d, i) => {
    for (const w of words(contentText(d.doc.content ?? {}))) if (w.length > 3) push(byContentWord, w, i);
  });
  return {
    docs,
    byIdentity: [...byIdentity],
    byWord: [...byWord],
    byStem: [...regroup(byWord, stem)],
    children: [...children],
    types: [...types],
    bySkeleton: [...regroup(byWord, skeletonWord)],
    deletes: [...deletes],
    vocabByFirst: [...vocabByFirst],
    byContentStem: [...regroup(byContentWord, stem)],
  };
}

function actual(idx: ResolverIndex) {
  return {
    docs: idx.docs.map((d) => ({ doc: d.doc, identityKey: d.identityKey, nameKey: d.nameKey, nameWords: d.nameWords })),
    byIdentity: [...idx.byIdentity],
    byWord: [...idx.byWord],
    byStem: [...idx.byStem],
    children: [...idx.children],
    types: [...idx.types],
    bySkeleton: [...skeletonIndex(idx).bySkeleton],
    deletes: [...typoIndex(idx).deletes.keyEntries()],
    vocabByFirst: [...typoIndex(idx).vocabByFirst],
    byContentStem: [...contentIndex(idx).byContentStem],
  };
}

const doc = (i: number, displayName: string, content: Record<string, unknown> = {}, identity = `doc-${i}`) =>
  ({
    documentType: ["Composition", "Report", "Folder"][i % 3]!,
    identity,
    displayName,
    folderIdentity: i % 4 ? `folder-${i % 3}` : null,
    content,
  }) as WorkspaceDocument;

/** Names and contents off the fast path: every one of them must fall back to fold and words. */
const unusual: WorkspaceSnapshot = {
  generation: "unusual",
  documents: [
    "Ёлка ёжик ЁЖИК",
    "  Учёт   остатков ",
    "Счёт\u00a0на\tоплату",
    "«Объект Альфа» — этап 2",
    "Obekt Alfa",
    "SWIFT-перевод №5",
    "ｆｕｌｌｗｉｄｔｈ Ａｌｆａ",
    "Café crème",
    "Cafe\u0301 decomposed",
    "ℌilbert \u212Aelvin",
    "ДЖЕКПОТ 🎰 выигрыш",
    "",
    "—",
    "отчёт отчёт отчет",
    "Ѐ Ѐ ЎЇ ђ", // Cyrillic outside а–я, inside the stable block
    "İstanbul",
    "ааааа бббббб вввввввввв",
    "Табель учёта рабочего времени сотрудников подразделения",
  ].map((name, i) =>
    doc(
      i,
      name,
      [
        {},
        { description: "Учёт ОСТАТКОВ на складе; ёмкость — 5 т" },
        { description: "Café crème, 2 шт." },
        { a: "первая строка", b: "вторая строка", n: 5, f: true, z: null },
        { nested: { list: ["вложенный текст", { deep: "глубже" }], n: 1 } },
        { description: "длинный ".repeat(120) },
        { description: "" },
        { x: "ｆｕｌｌ", y: "ℌ" },
      ][i % 8]!,
    ),
  ),
};
unusual.documents.push(doc(100, "Same identity", {}, "Doc-UPPER"), doc(101, "Same identity again", {}, "doc-upper"));

describe("resolver index build", () => {
  it.each([
    ["the 19-document fixture", workspace],
    ["names and contents off the fast path", unusual],
    ["1k synthetic documents", syntheticWorkspace(1_000, 43)],
  ])("gives the plain reference's index for %s", (_, ws) => {
    expect(actual(buildIndex(ws, "x"))).toStrictEqual(reference(ws));
  });

  it("finds each deletion key's words, and nothing for a string that is no key", () => {
    const ws = syntheticWorkspace(1_000, 44);
    const idx = buildIndex(ws, "x");
    const { deletes } = typoIndex(idx);
    const keys = reference(ws).deletes;
    expect(keys.length).toBeGreaterThan(1000);
    for (const [k, ws2] of keys) expect(deletes.wordsFor(k).map((id) => idx.names.vocab.strings[id])).toEqual(ws2);
    const known = new Set(keys.map(([k]) => k));
    for (const [w] of reference(ws).byWord) if (!known.has(`${w}ъ`)) expect(deletes.wordsFor(`${w}ъ`)).toEqual([]);
  });
});
