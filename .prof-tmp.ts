import { syntheticWorkspace } from "./bench/resolve";
import { buildIndex, skeletonIndex, typoIndex, contentIndex } from "./workbench/resolve-index";
import { resolveMention } from "./workbench/resolve";
const ws = syntheticWorkspace(100000);
const idx = buildIndex(ws, "q"); skeletonIndex(idx); typoIndex(idx); contentIndex(idx);
const named = ws.documents.filter((d) => d.documentType !== "Folder");
const LAT: Record<string, string> = { а: "a", б: "b", в: "v", г: "g", д: "d", е: "e", ж: "zh", з: "z", и: "i", й: "y", к: "k", л: "l", м: "m", н: "n", о: "o", п: "p", р: "r", с: "s", т: "t", у: "u", ф: "f", х: "kh", ц: "ts", ч: "ch", ш: "sh", щ: "shch", ы: "y", э: "e", ю: "yu", я: "ya" };
const cats: Record<string, (n: string, id: string, i: number) => string> = {
  exact: (n) => n, identity: (_n, id) => id, declined: (n) => n.replace(/а(\s|$)/, "ы$1"), typo: (n) => n.slice(0, 3) + n.slice(4),
  translit: (n) => [...n.toLowerCase()].map((c) => LAT[c] ?? c).join(""), unknown: (_n, _id, i) => `Неизвестный документ ${i}`,
};
for (const [cat, f] of Object.entries(cats)) {
  const t: number[] = [];
  for (let i = 0; i < 300; i++) { const d = named[(i * 7919) % named.length]!; const q = f(d.displayName, d.identity, i); const t0 = performance.now(); resolveMention(idx, { mention: q }); t.push(performance.now() - t0); }
  t.sort((a, b) => a - b);
  console.log(cat, "p50", t[150]!.toFixed(3), "p99", t[297]!.toFixed(3), "max", t[299]!.toFixed(3));
}
