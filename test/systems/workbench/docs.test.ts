import { describe, expect, it } from "vitest";
import { buildDocsIndex, retrieveDocs, splitMarkdown } from "../../../systems/workbench/docs";

const pages = [
  {
    path: "clarifications.md",
    markdown:
      "# Уточняющие вопросы ассистента\n\nАссистент задаёт уточняющий вопрос и предлагает варианты.\n\n## Как ответить\n\nНажмите на вариант или ответьте текстом. Ответ «отмена» прекращает запрос.\n",
  },
  {
    path: "folders.md",
    markdown:
      "# Папки\n\nПапка группирует документы.\n\n## Поиск в папке\n\nПоиск выполняется внутри папки и вложенных папок.\n\n```\n# не заголовок\n```\n",
  },
  { path: "copy/folders-copy.md", markdown: "# Папки\n\nПапка группирует документы.\n" },
  { path: "expressions.md", markdown: "# Выражения\n\n## Функции дат\n\nADDDAYS(date, n) прибавляет n дней.\n" },
];
const index = buildDocsIndex(pages);

describe("documentation retrieval (stage 05)", () => {
  it("splits Markdown by headings with a heading path, ignoring # inside code fences", () => {
    const s = splitMarkdown(pages[1]!);
    expect(s.map((x) => x.headingPath)).toEqual(["Папки", "Папки > Поиск в папке"]);
    expect(s[1]!.docId).toBe("folders#поиск-в-папке");
    expect(s[1]!.text).toContain("# не заголовок");
  });

  it("ranks with BM25 over stemmed terms: the answer section comes first", () => {
    const r = retrieveDocs(index, "Объясни, как ответить на уточняющий вопрос ассистента");
    expect(r.fragments[0]!.docId).toMatch(/^clarifications#/);
    expect(r.fragments.every((f) => f.docId.startsWith("clarifications"))).toBe(true);
  });

  it("removes duplicate sections and respects the token budget", () => {
    const r = retrieveDocs(index, "что такое папка", { relativeFloor: 0 });
    const ids = r.fragments.map((f) => f.docId);
    expect(ids.filter((id) => id.endsWith("#папки"))).toHaveLength(1);
    expect(r.droppedDuplicates).toBe(1);
    const tight = retrieveDocs(index, "папка поиск", { tokenBudget: 20, relativeFloor: 0 });
    expect(tight.fragments.length).toBeLessThan(r.fragments.length + 1);
    expect(tight.droppedByBudget).toBeGreaterThan(0);
  });

  it("extra search expressions (proposed by a model) are ranked the same way", () => {
    expect(retrieveDocs(index, "как быть", { extraQueries: ["функции дат"] }).fragments[0]!.docId).toBe(
      "expressions#функции-дат",
    );
  });

  it("finds nothing for an unrelated question", () => {
    expect(retrieveDocs(index, "погода в Москве").fragments).toEqual([]);
  });
});
