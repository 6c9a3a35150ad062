import { osaDistance } from "../systems/workbench/distance";
import { resolveMention } from "../systems/workbench/resolve";
import {
  buildIndex,
  contentIndex,
  skeletonIndex,
  typoIndex,
  type ResolverIndex,
} from "../systems/workbench/resolve-index";
import { stem } from "../systems/workbench/stem";
import { fold, words } from "../systems/workbench/text";
import { skeletonWord } from "../systems/workbench/translit";
import type { WorkspaceDocument, WorkspaceSnapshot } from "../systems/workbench/types";
import type { Goal } from "./goals";
import { ms, summarize } from "./stats";

/**
 * Domain resolver at 1k / 10k / 100k documents: index build time, and query latency of the
 * indexed resolver against a linear scan over the same (pre-normalized) documents, measured in
 * the same run on the same queries. Query mix: exact names, identities, declined forms, typos,
 * transliterations and unknown names.
 */

// Deterministic PRNG so every run sees the same workspace and queries.
function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const SYL = [
  "ра",
  "сче",
  "то",
  "ски",
  "дка",
  "ост",
  "ат",
  "ки",
  "со",
  "гла",
  "со",
  "ва",
  "ни",
  "е",
  "за",
  "каз",
  "кли",
  "ен",
  "та",
  "до",
  "го",
  "вор",
  "пла",
  "теж",
  "скла",
  "дов",
  "про",
  "да",
  "жи",
  "ме",
  "ся",
  "ца",
  "нор",
  "ма",
  "тив",
  "бю",
  "джет",
  "от",
  "чет",
  "пе",
  "ре",
  "лик",
  "мар",
  "шрут",
  "тов",
  "ар",
];
const TYPES = ["Composition", "Entity", "Form", "Report"];

function vocabulary(n: number, r: () => number): string[] {
  const out = new Set<string>();
  while (out.size < n) {
    const k = 2 + Math.floor(r() * 3);
    let w = "";
    for (let i = 0; i < k; i++) w += SYL[Math.floor(r() * SYL.length)];
    if (w.length >= 4) out.add(w);
  }
  return [...out];
}

export function syntheticWorkspace(size: number, seed = 42): WorkspaceSnapshot {
  const r = rng(seed);
  const vocab = vocabulary(Math.max(500, Math.round(size / 5)), r);
  const docs: WorkspaceDocument[] = [];
  const folders = Math.max(5, Math.round(size / 100));
  for (let f = 0; f < folders; f++) {
    docs.push({
      documentType: "Folder",
      identity: `folder-${f}`,
      displayName: `Папка ${vocab[f % vocab.length]} ${f}`,
      folderIdentity: f > 4 ? `folder-${Math.floor(r() * 5)}` : null,
      content: {},
    });
  }
  for (let i = docs.length; i < size; i++) {
    const nWords = 2 + Math.floor(r() * 2);
    const name = Array.from({ length: nWords }, () => vocab[Math.floor(r() * vocab.length)]!).join(" ");
    const cap = name.charAt(0).toUpperCase() + name.slice(1);
    docs.push({
      documentType: TYPES[i % TYPES.length]!,
      identity: `doc-${i}`,
      displayName: cap,
      folderIdentity: `folder-${Math.floor(r() * folders)}`,
      content: {
        description: `Описание ${vocab[Math.floor(r() * vocab.length)]} и ${vocab[Math.floor(r() * vocab.length)]}`,
      },
    });
  }
  return { generation: String(size), documents: docs };
}

const LAT: Record<string, string> = {
  а: "a",
  б: "b",
  в: "v",
  г: "g",
  д: "d",
  е: "e",
  ж: "zh",
  з: "z",
  и: "i",
  й: "y",
  к: "k",
  л: "l",
  м: "m",
  н: "n",
  о: "o",
  п: "p",
  р: "r",
  с: "s",
  т: "t",
  у: "u",
  ф: "f",
  х: "kh",
  ц: "ts",
  ч: "ch",
  ш: "sh",
  щ: "shch",
  ы: "y",
  э: "e",
  ю: "yu",
  я: "ya",
};

export function queries(ws: WorkspaceSnapshot, n: number, seed = 7): string[] {
  const r = rng(seed);
  const out: string[] = [];
  const named = ws.documents.filter((d) => d.documentType !== "Folder");
  for (let i = 0; i < n; i++) {
    const d = named[Math.floor(r() * named.length)]!;
    const name = d.displayName;
    switch (i % 6) {
      case 0:
        out.push(name);
        break; // exact
      case 1:
        out.push(d.identity);
        break; // identity
      case 2:
        out.push(name.replace(/а(\s|$)/, "ы$1").replace(/ки(\s|$)/, "ок$1"));
        break; // declined
      case 3: {
        const k = 1 + Math.floor(r() * (name.length - 2));
        out.push(name.slice(0, k) + name.slice(k + 1));
        break;
      } // typo
      case 4:
        out.push([...name.toLowerCase()].map((c) => LAT[c] ?? c).join(""));
        break; // transliterated
      default:
        out.push(`Неизвестный документ ${i}`); // not found
    }
  }
  return out;
}

interface Normalized {
  stems: string[][];
  skeletons: string[][];
}
const normalizedFor = new WeakMap<ResolverIndex, Normalized>();
/** The linear scan's own precomputation: every name's stems and skeletons, once (not timed per query). */
function normalizedDocs(idx: ResolverIndex): Normalized {
  let n = normalizedFor.get(idx);
  if (!n) {
    n = {
      stems: idx.docs.map((d) => d.nameWords.map(stem)),
      skeletons: idx.docs.map((d) => d.nameWords.map(skeletonWord)),
    };
    normalizedFor.set(idx, n);
  }
  return n;
}

/** The floor: the same signals computed by scanning every document (normalized once, up front). */
function linearResolve(idx: ResolverIndex, mention: string): number {
  const f = fold(mention);
  const ws = words(f);
  const stems = ws.map(stem);
  const sk = ws.map(skeletonWord);
  const { stems: docStems, skeletons } = normalizedDocs(idx);
  let best = 0;
  let found = 0;
  for (let i = 0; i < idx.docs.length; i++) {
    const d = idx.docs[i]!;
    let score = 0;
    if (d.identityKey === f) score = 1;
    else if (d.nameKey === ws.join(" ")) score = 0.95;
    else if (ws.every((w) => d.nameWords.includes(w))) score = 0.7;
    else if (stems.every((s) => docStems[i]!.includes(s))) score = 0.6;
    else if (sk.every((s) => skeletons[i]!.includes(s))) score = 0.55;
    else if (ws.length === d.nameWords.length && ws.every((w, i) => osaDistance(w, d.nameWords[i]!, 1) <= 1))
      score = 0.5;
    if (score > best) {
      best = score;
      found = 1;
    } else if (score === best && score > 0) found++;
  }
  return found;
}

function timeEach(qs: string[], fn: (q: string) => unknown): number[] {
  const out: number[] = [];
  for (const q of qs) {
    const t0 = performance.now();
    fn(q);
    out.push(performance.now() - t0);
  }
  return out;
}

export async function benchResolve(o: { quick: boolean; log: (l: string) => void }): Promise<Goal[]> {
  const { log } = o;
  const sizes = o.quick ? [1_000, 10_000, 100_000] : [1_000, 10_000, 100_000];
  const goals: Goal[] = [];
  log("resolve: domain resolver, indexed vs a linear scan over the same normalized documents (same queries, same run)");
  for (const size of sizes) {
    const ws = syntheticWorkspace(size);
    // Build twice and keep the second figure: the first pays for JIT warm-up and the stem cache.
    buildIndex(ws, `warm-${size}`);
    const other = syntheticWorkspace(size, 43); // a different vocabulary: the stem cache does not help
    const t0 = performance.now();
    const idx = buildIndex(other, `bench-${size}`);
    const buildMs = performance.now() - t0;
    // The weak-signal parts are built on first use; force them to report the full cost too.
    const lazyMs = skeletonIndex(idx).ms + typoIndex(idx).ms + contentIndex(idx).ms;
    const qs = queries(ws, o.quick ? 600 : 3000);
    const idx2 = buildIndex(ws, `q-${size}`);
    timeEach(qs.slice(0, 100), (q) => resolveMention(idx2, { mention: q })); // warm-up
    const indexed = summarize(timeEach(qs, (q) => resolveMention(idx2, { mention: q })));
    const linQs = qs.slice(0, size >= 100_000 ? (o.quick ? 60 : 200) : qs.length);
    normalizedDocs(idx2);
    timeEach(linQs.slice(0, 10), (q) => linearResolve(idx2, q));
    const linear = summarize(timeEach(linQs, (q) => linearResolve(idx2, q)));
    const speedup = linear.p50 / indexed.p50;
    log(
      `  ${size.toLocaleString("en-US").padStart(7)} docs: index build ${ms(buildMs)} + ${ms(lazyMs)} on first use of the weak signals (${idx.docs.length} docs, ${idx.byWord.size} words); ` +
        `indexed p50 ${ms(indexed.p50)} p99 ${ms(indexed.p99)} (n=${indexed.n}); linear scan p50 ${ms(linear.p50)} p99 ${ms(linear.p99)} (n=${linear.n}); speedup p50 ${speedup.toFixed(1)}×`,
    );
    if (size === 100_000) {
      goals.push(
        { name: "resolve.p99@100k", ratio: indexed.p99 / 2, goal: "≤ 1.00 of 2 ms", ok: indexed.p99 < 2 },
        {
          name: "resolve.indexBuild@100k",
          ratio: buildMs / 1000,
          goal: "≤ 1.00 of 1 s (core index)",
          ok: buildMs < 1000,
        },
        {
          name: "resolve.indexBuildWithLazy@100k",
          ratio: (buildMs + lazyMs) / 1000,
          goal: "≤ 1.00 of 1 s (core + every lazy part)",
          ok: buildMs + lazyMs < 1000,
        },
        { name: "resolve.speedupVsLinear@100k", ratio: speedup, goal: "≥ 10× the linear scan", ok: speedup >= 10 },
      );
    }
  }
  return goals;
}

// `npx tsx bench/resolve.ts [--quick]` runs it alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  void (async () => {
    const { goalLine } = await import("./goals");
    const goals = await benchResolve({ quick: process.argv.includes("--quick"), log: (l) => console.log(l) });
    console.log("\ngoals:");
    for (const g of goals) console.log(goalLine(g));
  })();
}
