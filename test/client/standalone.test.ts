import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Issue 34: `client/` is importable alone. A browser program that imports it type-checks with
 * the DOM typings only (client/tsconfig.json: no @types/node), and nothing of the server —
 * storage/, http/, driver/, systems/, llm/ — is in the import closure of client/index.ts: only
 * client/ itself and the shared contract in contract/ (zod schemas with no server imports).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ALLOWED = ["client/", "contract/"];
/** Packages the client may reach: its SSE parser, and zod for the contract's types. */
const PACKAGES = ["eventsource-parser", "zod", "typescript"];

function clientProgram(rootNames?: string[]): { program: ts.Program; config: ts.ParsedCommandLine } {
  const configPath = join(ROOT, "client/tsconfig.json");
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  )!;
  return { program: ts.createProgram(rootNames ?? config.fileNames, config.options), config };
}

const rel = (f: string) => relative(ROOT, f).split("\\").join("/");

function packageOf(file: string): string | null {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file.split("\\").join("/"));
  return m ? m[1]! : null;
}

describe("client/ stands alone", () => {
  it("tsc -p client/tsconfig.json: browser typings only, zero diagnostics", () => {
    const { program, config } = clientProgram();
    expect(config.options.types).toEqual([]);
    expect(config.options.lib).toEqual(["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"]);
    expect(config.fileNames.map(rel)).toContain("client/index.ts");
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? `${rel(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start!).line + 1}` : "";
      return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
    });
    expect(diagnostics).toEqual([]);
    // No Node typings slipped in through a package's `/// <reference types="node" />`.
    const nodeTypes = program.getSourceFiles().filter((f) => packageOf(f.fileName) === "@types/node");
    expect(nodeTypes.map((f) => rel(f.fileName))).toEqual([]);
  }, 120_000);

  it("the import closure of client/index.ts holds client/ and contract/ only (and its packages)", () => {
    const { program } = clientProgram([join(ROOT, "client/index.ts")]);
    const own: string[] = [];
    const packages = new Set<string>();
    for (const sf of program.getSourceFiles()) {
      const pkg = packageOf(sf.fileName);
      if (pkg) packages.add(pkg);
      else own.push(rel(sf.fileName));
    }
    expect(own).toContain("client/index.ts");
    expect(own).toContain("contract/http.ts");
    expect(own.filter((f) => !ALLOWED.some((a) => f.startsWith(a)))).toEqual([]);
    expect([...packages].filter((p) => !PACKAGES.includes(p))).toEqual([]);
  }, 120_000);

  it("the shared contract imports nothing but zod and itself", () => {
    const { program } = clientProgram([join(ROOT, "client/index.ts")]);
    const outside: string[] = [];
    for (const sf of program.getSourceFiles()) {
      const file = rel(sf.fileName);
      if (!file.startsWith("contract/")) continue;
      for (const st of sf.statements) {
        if (!ts.isImportDeclaration(st) && !ts.isExportDeclaration(st)) continue;
        const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : null;
        if (!spec || spec === "zod") continue;
        const target = rel(resolve(ROOT, dirname(file), spec));
        if (!spec.startsWith(".") || !target.startsWith("contract/")) outside.push(`${file}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  }, 120_000);
});
