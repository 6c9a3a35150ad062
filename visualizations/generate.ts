import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defaultRegistry } from "../systems/clinic/registry";
import { machineCatalog } from "./catalog";
import { galleryPage } from "./page";
import { machineSvg } from "./svg";

/**
 * `npm run diagrams [-- <dir>]`: draws every machine of the catalog (the clinic's from the seed
 * settings) into <dir> as one SVG per machine plus an index.html. Default dir: .data/diagrams.
 */
export function generateDiagrams(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const registry = defaultRegistry();
  const items = machineCatalog(registry).map((m) => ({ id: m.id, title: m.title, description: m.description, svg: machineSvg(m.build(registry), { title: m.title }) }));
  const written: string[] = [];
  for (const i of items) {
    const file = join(dir, `${i.id}.svg`);
    writeFileSync(file, `${i.svg}\n`);
    written.push(file);
  }
  const index = join(dir, "index.html");
  writeFileSync(index, galleryPage("Машины состояний проекта", items));
  written.push(index);
  return written;
}

if (process.argv[1] && resolve(process.argv[1]).endsWith(join("visualizations", "generate.ts"))) {
  const dir = resolve(process.argv[2] ?? ".data/diagrams");
  for (const f of generateDiagrams(dir)) console.log(f);
}
