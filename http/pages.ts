/**
 * Every page the server serves to a person, in one list (issue 45: the README's table and the
 * start-up banner disagreed with the pages). The banner prints it (start.ts startupText) and a
 * test checks the README's «Which page to open» table row by row against `pagesTable()` and
 * every file in http/static against the list, so a page added, renamed or repurposed without
 * both is a red test.
 */
export interface Page {
  path: string;
  /** The page's name as its header shows it (Russian, as the operators read it). */
  name: string;
  /** What a newcomer opens it for (English, as the README). */
  purpose: string;
}

export const PAGES: readonly Page[] = [
  {
    path: "/",
    name: "Отладка",
    purpose:
      "the clinic's knowledge base: upload, chunks, search, and one question without dialogue memory (router, fragments, prompt)",
  },
  {
    path: "/sandbox.html",
    name: "Песочница",
    purpose: "the clinic patient chat, with the run's stages, the dialogue's state, its diagram and replay",
  },
  { path: "/inbox.html", name: "Обращения", purpose: "the operators' inbox: escalated threads, takeover, replies" },
  { path: "/settings.html", name: "Настройки", purpose: "the clinic's branches, prompts and step editors; demo data" },
  { path: "/workbench.html", name: "Workbench", purpose: "the Configurator chat with clarifications" },
  {
    path: "/machines.html",
    name: "Схемы",
    purpose: "every statechart drawn (laid out by elkjs; `npm run diagrams` writes them to `doc/diagrams/`)",
  },
  {
    path: "/inspector.html",
    name: "Инспектор",
    purpose: "live Stately inspection of running machines (`STATELY_INSPECT=true`)",
  },
  { path: "/docs.html", name: "Документация", purpose: "how the system works, in Russian, for operators" },
  { path: "/api.html", name: "API", purpose: "the API reference" },
  { path: "/openapi.json", name: "OpenAPI", purpose: "the OpenAPI 3.1 document" },
];

/** The README's page table, exactly as the README must hold it. */
export function pagesTable(): string {
  return [
    "| Page | What for |",
    "| --- | --- |",
    ...PAGES.map((p) => `| \`${p.path}\` — ${p.name} | ${p.purpose} |`),
  ].join("\n");
}

/** "listening on URL" plus one line per page, so the terminal says where to go. */
export function startupText(url: string, where: string): string {
  const width = Math.max(...PAGES.map((p) => p.name.length));
  return [`listening on ${url} (${where})`, ...PAGES.map((p) => `  ${p.name.padEnd(width)}  ${url}${p.path}`)].join(
    "\n",
  );
}
