import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PAGES, pagesTable, startupText } from "../../http/pages";
import { STATIC_DIR } from "../../http/routes/operator-pages";
import { useTestServer } from "../utils/server";

/** The one list of pages (http/pages.ts) against the README, the banner, the files and the server. */

const server = useTestServer();

describe("the list of pages", () => {
  it("is the README's «Which page to open» table, row for row", () => {
    const readme = readFileSync("README.md", "utf8");
    const section = readme.slice(readme.indexOf("\n## Which page to open"));
    const rows = (s: string) => s.split("\n").filter((l) => l.startsWith("|"));
    const inReadme = rows(section.slice(0, section.indexOf("\n## ", 4)));
    expect(inReadme).toEqual(rows(pagesTable()));
  });

  it("names every page the server has a file for (`/` is debug.html)", () => {
    const files = readdirSync(STATIC_DIR).filter((f) => f.endsWith(".html"));
    const listed = PAGES.map((p) => (p.path === "/" ? "/debug.html" : p.path));
    for (const f of files) expect(listed).toContain(`/${f}`);
    // And no page twice.
    expect(new Set(PAGES.map((p) => p.path)).size).toBe(PAGES.length);
  });

  it("is what the start-up banner prints", () => {
    const text = startupText("http://127.0.0.1:3000", "embedded PGlite at ./.data");
    const lines = text.split("\n").slice(1);
    expect(lines).toHaveLength(PAGES.length);
    PAGES.forEach((p, i) => {
      expect(lines[i]!.trim().startsWith(p.name)).toBe(true);
      expect(lines[i]!.endsWith(` http://127.0.0.1:3000${p.path}`)).toBe(true);
    });
  });

  it("holds every link of the pages' header, under the same name", () => {
    const common = readFileSync(join(STATIC_DIR, "assets", "common.js"), "utf8");
    const nav = [...common.matchAll(/\["(\/[^"]*)", "([^"]+)"\]/g)].map((m) => [m[1], m[2]]);
    expect(nav.length).toBeGreaterThan(3);
    for (const [path, name] of nav) expect(PAGES.find((p) => p.path === path)?.name).toBe(name);
  });

  it("every listed page is served", async () => {
    for (const p of PAGES) {
      const r = await fetch(`${server.url}${p.path}`);
      expect(r.status, p.path).toBe(200);
      await r.body?.cancel();
    }
  });
});
