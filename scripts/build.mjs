// `npm run build`: the server as one ES module, dist/main.js (+ source map), for `npm start`.
// Measured (doc/bench.md "Production start"): a compiled bundle starts faster and costs less CPU
// per turn than transpiling the TypeScript at run time with tsx. Packages stay external (PGlite
// loads its WASM next to its own module); only the project's sources are bundled.
import * as esbuild from "esbuild";
import { readFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = resolve(root, "dist");

// Sources find their runtime files (migrations, prompts, static pages) from `import.meta.url`.
// In the bundle that would be dist/main.js for every file, so each source's own URL is put back,
// relative to the bundle: the folder stays relocatable (a Docker image, another checkout).
const ownUrl = {
  name: "own-import-meta-url",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes(`${"/"}node_modules${"/"}`)) return undefined;
      const source = await readFile(args.path, "utf8");
      if (!source.includes("import.meta.url")) return { contents: source, loader: "ts" };
      const rel = relative(outdir, args.path).split("\\").join("/");
      const url = `new URL(${JSON.stringify(rel)}, import.meta.url).href`;
      return { contents: source.replaceAll("import.meta.url", url), loader: "ts" };
    });
  },
};

await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["main.ts"],
  outdir,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
  plugins: [ownUrl],
});
