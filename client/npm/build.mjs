// Builds the client as a standalone package (issue 45: it had to be copied with contract/ as two
// folders): dist/index.js, one ES module with client/ and the contract it uses bundled in
// (eventsource-parser stays a dependency), and dist/types, the declarations of client/ and of the
// contract files they refer to. zod is imported by those declarations for types only (an optional
// peer: a TypeScript user has it, a JavaScript user does not need it). Run by `npm pack` (prepack).
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const here = dirname(fileURLToPath(import.meta.url));
const client = resolve(here, "..");
const root = resolve(client, "..");
// `node build.mjs [folder]`: build into this folder (with package.json), default here (npm pack).
const out = process.argv[2] ? resolve(process.argv[2]) : here;
const dist = join(out, "dist");
rmSync(dist, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await esbuild.build({
  entryPoints: [join(client, "index.ts")],
  outfile: join(dist, "index.js"),
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  external: ["eventsource-parser", "zod"],
  sourcemap: true,
  logLevel: "warning",
});

const program = ts.createProgram([join(client, "index.ts")], {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
  types: [],
  strict: true,
  skipLibCheck: true,
  declaration: true,
  emitDeclarationOnly: true,
  rootDir: root,
  outDir: join(dist, "types"),
});
const emitted = program.emit();
const errors = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].filter(
  (d) => d.category === ts.DiagnosticCategory.Error,
);
if (errors.length) {
  console.error(
    ts.formatDiagnostics(errors, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => root,
      getNewLine: () => "\n",
    }),
  );
  process.exit(1);
}
copyFileSync(join(client, "README.md"), join(out, "README.md"));
if (out !== here) copyFileSync(join(here, "package.json"), join(out, "package.json"));
