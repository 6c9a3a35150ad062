// JavaScript's `\w`, `\W` and `\b` know only [A-Za-z0-9_]: next to Cyrillic they silently never
// match («сильн\w* бол» misses «сильная боль», «человек\b» misses «человека»). This test fails on
// any source line of the project that writes one of them in a pattern holding Cyrillic; use
// `\p{L}` with the `u` flag (or stems, as systems/clinic/red-flags.ts does) instead.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { escalationReasonFromText } from "../../systems/clinic/escalation-reason";

const ROOT = join(import.meta.dirname, "../..");
const SKIP = new Set(["node_modules", "dist", ".git", ".data", "eval/out"]);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (SKIP.has(relative(ROOT, path)) || SKIP.has(name)) return [];
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mjs|js)$/.test(name) ? [path] : [];
  });
}

const CYRILLIC = /[\u0400-\u04FF]/;
// a backslash escape \b, \w or \W that is not itself an escaped backslash
const ASCII_CLASS = /(?<!\\)(?:\\\\)*\\[bwW]/;
const COMMENT = /^\s*(?:\/\/|\*|\/\*)/;

export function offendingLines(text: string): number[] {
  return text
    .split("\n")
    .map((line, i) => ({ line, i }))
    .filter(({ line }) => !COMMENT.test(line) && CYRILLIC.test(line) && ASCII_CLASS.test(line))
    .map(({ i }) => i + 1);
}

describe("regular expressions next to Cyrillic", () => {
  it("the check finds what it is for (and not escaped backslashes or comments)", () => {
    expect(offendingLines("const re = /сильн\\w* бол/i;")).toEqual([1]);
    expect(offendingLines("const re = /человек\\b/;")).toEqual([1]);
    expect(offendingLines("const re = /нос\\W/;")).toEqual([1]);
    expect(offendingLines("const re = /сильн\\p{L}* бол/iu;")).toEqual([]);
    expect(offendingLines('const s = "путь C:\\\\\\\\work";')).toEqual([]);
    expect(offendingLines("// «сильн\\w* бол» never matched")).toEqual([]);
  });

  it("no source file of the project has one", () => {
    const hits = sources(ROOT).flatMap((f) =>
      offendingLines(readFileSync(f, "utf8")).map((n) => `${relative(ROOT, f)}:${n}`),
    );
    expect(hits).toEqual([]);
  });

  it("escalation reasons come from plain Russian words; no cue stays unknown", () => {
    const cases: [string, string | null][] = [
      ["Позовите человека", "explicit_request"],
      ["Соедините с администратором, пожалуйста", "explicit_request"],
      ["хочу поговорить с живым оператором", "explicit_request"],
      ["У меня очень сильная боль в ухе", "acute_pain"],
      ["резкая боль в груди", "acute_pain"],
      ["Мне назначили операцию под наркозом", "surgery"],
      ["Это безобразие, сколько можно ждать!", "angry"],
      ["Здравствуйте, хочу записаться к лору", null],
      ["Спасибо", null],
    ];
    for (const [text, reason] of cases) expect(escalationReasonFromText(text), text).toBe(reason);
  });
});
