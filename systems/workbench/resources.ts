import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildDocsIndex, type DocPage, type DocsIndex } from "./docs";
import { WorkspaceSnapshotSchema, type WorkspaceSnapshot } from "./types";

const here = dirname(fileURLToPath(import.meta.url));
/** Documentation written for this project; used when DOCS_DIR is not set. */
export const BUNDLED_DOCS_DIR = resolve(here, "./docs");
export const SAMPLE_WORKSPACE_PATH = resolve(here, "./samples/workspace.json");

function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    if (depth > 6) return;
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p, depth + 1);
      else if (/\.md$/i.test(name)) out.push(p);
    }
  };
  walk(dir, 0);
  return out;
}

interface CachedDocs {
  signature: string;
  checkedAt: number;
  index: DocsIndex;
}
const docsCache = new Map<string, CachedDocs>();

/**
 * The documentation index for a folder, rebuilt only when a file changed (name, size or mtime);
 * the folder is re-examined at most every few seconds.
 */
export function loadDocsIndex(dir: string | undefined, recheckMs = 5_000): DocsIndex | null {
  const root = resolve(dir ?? BUNDLED_DOCS_DIR);
  const cached = docsCache.get(root);
  if (cached && Date.now() - cached.checkedAt < recheckMs) return cached.index;
  let files: string[];
  try {
    files = markdownFiles(root);
  } catch {
    return null;
  }
  const signature = files
    .map((f) => {
      const s = statSync(f);
      return `${f}:${s.size}:${s.mtimeMs}`;
    })
    .join("|");
  if (cached && cached.signature === signature) {
    cached.checkedAt = Date.now();
    return cached.index;
  }
  const pages: DocPage[] = files.map((f) => ({
    path: relative(root, f).split("\\").join("/"),
    markdown: readFileSync(f, "utf8"),
  }));
  const index = buildDocsIndex(pages);
  docsCache.set(root, { signature, checkedAt: Date.now(), index });
  return index;
}

let sample: { raw: unknown; parsed: WorkspaceSnapshot } | null = null;

/** The sample workspace shipped with the project: the default when a message carries none. */
export function sampleWorkspace(): { raw: unknown; parsed: WorkspaceSnapshot } {
  if (!sample) {
    const raw = JSON.parse(readFileSync(SAMPLE_WORKSPACE_PATH, "utf8")) as unknown;
    sample = { raw, parsed: WorkspaceSnapshotSchema.parse(raw) };
  }
  return sample;
}
