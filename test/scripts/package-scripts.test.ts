import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** Every `npm run` script that starts a project file names one that exists (a layout move once left `mcp:demo` dangling). */
describe("package.json scripts", () => {
  const scripts = JSON.parse(readFileSync("package.json", "utf8")).scripts as Record<string, string>;
  const files = Object.entries(scripts).flatMap(([name, cmd]) =>
    [...cmd.matchAll(/(?:^|\s)((?:[\w.-]+\/)*[\w.-]+\.(?:ts|mjs|js))(?=\s|$)/g)].map((m) => [name, m[1]!] as const),
  );

  it("name files (the check looks at something)", () => {
    expect(files.map(([name]) => name)).toEqual(expect.arrayContaining(["start", "bench", "mcp:demo", "eval"]));
  });

  // dist/ is what `npm run build` (prestart) writes: the file to check is the build's source.
  const BUILT: Record<string, string> = { "dist/main.js": "scripts/build.mjs" };

  it.each(files)("%s → %s exists (or is built by npm run build)", (_name, file) => {
    expect(existsSync(BUILT[file] ?? file)).toBe(true);
    if (BUILT[file]) expect(scripts.prestart).toBe("npm run build");
  });
});
