import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { MachineEntry } from "./catalog";
import { galleryPage } from "./page";
import { machineSvg } from "./svg";

/**
 * Draws the catalog's machines into <dir> as one SVG per machine plus an index.html
 * (`npm run diagrams`, scripts/diagrams.ts, passes every system's entries).
 */
export async function generateDiagrams(dir: string, entries: MachineEntry[]): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const items = await Promise.all(
    entries.map(async (m) => ({
      id: m.id,
      title: m.title,
      description: m.description,
      svg: await machineSvg(m.build(), { title: m.title }),
    })),
  );
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
