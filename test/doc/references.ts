import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { posix } from "node:path";

/**
 * The checker behind test/doc/references.test.ts: what README.md and doc/*.md point at must exist
 * in this repository — relative links (and their #anchors), backticked repo paths, `npm run`
 * scripts, UPPER_SNAKE environment settings — and nothing may point outside it (`../`, `§` of a
 * document the repository does not hold, absolute file paths).
 */

export interface Repo {
  /** Repo-relative POSIX paths of every file and folder (folders without a trailing slash). */
  paths: Set<string>;
  /** The top-level entries (`systems`, `test`, `.ci`, `README.md`, …). */
  top: Set<string>;
  /** package.json scripts. */
  scripts: Set<string>;
  /** Every non-test TypeScript/JavaScript source the server, scripts, bench and eval run from. */
  source: string;
  /** The test files' sources: a setting only the suite reads (`process.env.NAME` there) is documented too. */
  testSource?: string;
  /** Markdown file (repo-relative) → its text, to check #anchors. */
  readMarkdown(path: string): string | undefined;
}

/** Generated or local folders a doc may name though they are not in a clean checkout. */
export const GENERATED = [".data/", "dist/", "test-results/", "node_modules/", "bench/results/", "eval/out/", ".env"];

/** Settings named in the docs that no .ts file reads by name; each must say why it is legitimate. */
export const ENV_ALLOWLIST: Record<string, string> = {
  BENCH_ABLATE:
    "read only by the bench-only patch bench/ablations/guarantees.patch (a scratch build that switches a guarantee off to measure it; never in the product)",
};

const SKIP_DIRS = new Set(["node_modules", ".git", ".data", "dist", "test-results", ".scratch"]);

export function loadRepo(root: string): Repo {
  const paths = new Set<string>();
  const sources: string[] = [];
  const testSources: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (SKIP_DIRS.has(e.name)) continue;
      const abs = join(dir, e.name);
      const rel = relative(root, abs).split("\\").join("/");
      paths.add(rel);
      if (e.isDirectory()) walk(abs);
      else if (/\.(ts|mjs|js)$/.test(e.name))
        (rel.startsWith("test/") ? testSources : sources).push(readFileSync(abs, "utf8"));
    }
  };
  walk(root);
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
  return {
    paths,
    top: new Set([...paths].filter((p) => !p.includes("/"))),
    scripts: new Set(Object.keys(pkg.scripts)),
    source: sources.join("\n"),
    testSource: testSources.join("\n"),
    readMarkdown: (p) => (paths.has(p) ? readFileSync(join(root, p), "utf8") : undefined),
  };
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of stripFences(markdown).text.split("\n")) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

interface Fence {
  lang: string;
  body: string;
}

function stripFences(markdown: string): { text: string; fences: Fence[] } {
  const fences: Fence[] = [];
  const text = markdown.replace(/^([ \t]*)(```|~~~)([^\n]*)\n([\s\S]*?)^\1\2[ \t]*$/gm, (_all, _i, _f, lang, body) => {
    fences.push({ lang: String(lang).trim(), body: String(body) });
    return "";
  });
  return { text, fences };
}

const SHELL = new Set(["sh", "bash", "shell", "console"]);
const PATH_CHARS = /^[\w.@*<>{},-]+(\/[\w.@*<>{},-]*)+$/;
const FILE_EXT = /\.(ts|mjs|js|json|md|sql|sh|yaml|yml|cfg|html|css|svg|txt)$/;

/** A path pattern (`systems/<name>/contract.ts`, `test/machines/*`, `{a,b}`) as a regex. */
function pathRegex(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") re += "[^/]*";
    else if (c === "<") {
      const end = pattern.indexOf(">", i);
      re += "[^/]+";
      i = end < 0 ? pattern.length : end;
    } else if (c === "{") {
      const end = pattern.indexOf("}", i);
      re += `(?:${pattern
        .slice(i + 1, end)
        .split(",")
        .map((s) => s.replace(/[.+?^$()|[\]\\]/g, "\\$&"))
        .join("|")})`;
      i = end;
    } else re += c.replace(/[.+?^$()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

function pathExists(repo: Repo, raw: string): boolean {
  const p = raw.replace(/^\.\//, "").replace(/\/+$/, "");
  if (GENERATED.some((g) => raw.startsWith(g) || `${p}/` === g)) return true;
  if (!/[*<{]/.test(p)) return repo.paths.has(p);
  const re = pathRegex(p);
  for (const q of repo.paths) if (re.test(q)) return true;
  return false;
}

/** Is this token a repo path the doc claims exists? */
function looksLikeRepoPath(repo: Repo, token: string): boolean {
  if (!PATH_CHARS.test(token) || token.startsWith("@") || token.startsWith("../")) return false;
  const first = token.replace(/^\.\//, "").split("/")[0]!;
  if (/^[A-Z][A-Z0-9_]*$/.test(first)) return false; // DATA_DIR/debug: a setting, not a path
  return repo.top.has(first) || token.endsWith("/") || FILE_EXT.test(token);
}

const ENV_SPAN = /^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(_<[A-Z]+>)?(?:=.*|\/.*)?$/;

function settingRead(repo: Repo, name: string, prefixOnly: boolean): boolean {
  if (name in ENV_ALLOWLIST) return true;
  if (prefixOnly) return repo.source.includes(`${name}_`);
  // A switch of the test suite (a recapture, say) is read by a test file as `process.env.NAME`.
  if (repo.testSource?.includes(`process.env.${name}`)) return true;
  return new RegExp(`(?<![A-Za-z0-9_])${name}(?![A-Za-z0-9_])`).test(repo.source);
}

/** Problems in one Markdown file (`file` repo-relative, e.g. `doc/api.md`). Empty when it is sound. */
export function checkMarkdown(file: string, markdown: string, repo: Repo): string[] {
  const problems: string[] = [];
  const bad = (what: string) => problems.push(`${file}: ${what}`);
  const dir = posix.dirname(file);
  const { text, fences } = stripFences(markdown);

  // Relative links ([text](target) and <a href>/<img src>), resolved from the file's folder.
  const links: string[] = [];
  const prose = text.replace(/`[^`\n]*`/g, "");
  for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push(m[1]!);
  for (const m of prose.matchAll(/\b(?:href|src)="([^"]+)"/g)) links.push(m[1]!);
  for (const link of links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) {
      if (/^file:/i.test(link)) bad(`link outside the repository: ${link}`);
      continue;
    }
    const [path = "", anchor] = link.split("#") as [string, string | undefined];
    if (path === "") {
      if (anchor && !anchors(markdown).has(anchor)) bad(`no heading for #${anchor}`);
      continue;
    }
    if (path.startsWith("/")) {
      bad(`absolute link: ${link}`);
      continue;
    }
    const target = posix.normalize(posix.join(dir, decodeURIComponent(path))).replace(/\/$/, "");
    if (target === ".." || target.startsWith("../")) {
      bad(`link outside the repository: ${link}`);
      continue;
    }
    if (!repo.paths.has(target) && target !== ".") {
      bad(`link to a missing file: ${link}`);
      continue;
    }
    if (anchor && target.endsWith(".md")) {
      const md = repo.readMarkdown(target);
      if (md !== undefined && !anchors(md).has(anchor)) bad(`no heading for ${link}`);
    }
  }

  // Anything else that leaves the repository: `../` outside links, `§` of a document not here,
  // absolute paths of a machine.
  const withoutLinks = markdown.replace(/\]\([^)]*\)/g, "]()").replace(/\b(?:href|src)="[^"]*"/g, "");
  for (const m of withoutLinks.matchAll(/(?:^|[\s`'"(=])(\.\.\/[^\s`'")]*)/g))
    bad(`points outside the repository: ${m[1]}`);
  for (const m of withoutLinks.matchAll(/(?:[\w-]+ )?§\s*\d[\d.]*/g))
    bad(`section reference to a document outside the repository: "${m[0].trim()}"`);
  for (const m of withoutLinks.matchAll(/(?:^|[\s`'"(])((?:\/work|\/home|\/Users|\/tmp)\/[^\s`'")]+)/g))
    bad(`absolute path outside the repository: ${m[1]}`);

  // Backticked spans: repo paths and settings.
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
  for (const span of spans) {
    if (looksLikeRepoPath(repo, span) && !pathExists(repo, span)) bad(`no such path: \`${span}\``);
    const env = ENV_SPAN.exec(span);
    if (env && !settingRead(repo, env[1]!, !!env[2]))
      bad(`setting \`${env[1]}${env[2] ?? ""}\` is read nowhere in the code`);
  }

  // Shell blocks: path arguments and NAME=value settings.
  for (const f of fences) {
    if (!SHELL.has(f.lang)) continue;
    for (const line of f.body.split("\n")) {
      const code = line.replace(/(^|\s)#.*$/, "");
      for (const raw of code.split(/\s+/)) {
        const token = raw.replace(/^['"]|['";&|]+$/g, "");
        if (looksLikeRepoPath(repo, token) && !pathExists(repo, token)) bad(`no such path in a command: ${token}`);
      }
      for (const m of code.matchAll(/(?:^|[\s(])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=/g))
        if (!settingRead(repo, m[1]!, false)) bad(`setting ${m[1]} is read nowhere in the code`);
    }
  }

  // npm run <script>, anywhere (prose, spans, blocks).
  for (const m of markdown.matchAll(/\bnpm run ([\w:.-]+)/g))
    if (!repo.scripts.has(m[1]!)) bad(`npm run ${m[1]}: no such script in package.json`);
  for (const m of markdown.matchAll(/\bnpm (start|test)\b/g))
    if (!repo.scripts.has(m[1]!)) bad(`npm ${m[1]}: no such script in package.json`);

  return problems;
}
