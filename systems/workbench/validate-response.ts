// Stage 12: algorithmic checks of the final answer — every [[identity]] exists in the snapshot and
// was passed to the model, the format holds, and the answer claims no change the Workbench never
// made (domain mutations are outside this flow).
import { findClaimedChange } from "./claims";
import { contextText, inventedDocuments, nameLookup } from "./answer-documents";
import type { ModelRequest } from "./model-request";
import { hasDocumentNamed, peekIndex } from "./resolve-index";
import { ContextFigures, unsupportedFigures, unsupportedNumbers } from "./answer-numbers";
import { fold, IDENTITY_RE, UUID_RE } from "./text";

export interface ValidationIssue {
  code:
    | "unknown_identity"
    | "not_in_context"
    | "empty_answer"
    | "malformed_citation"
    | "too_long"
    | "claimed_change"
    | "unsupported_number"
    | "raw_json"
    | "invented_document";
  detail?: string;
}

export interface ValidationResult {
  ok: boolean;
  issues: ValidationIssue[];
  citations: string[];
}

const CITATION_RE = /\[\[([^\[\]\n]{1,256})\]\]/g;

export { findClaimedChange } from "./claims";

export function extractCitations(answer: string): string[] {
  return [...new Set([...answer.matchAll(CITATION_RE)].map((m) => m[1]!.trim()))];
}

export function validateResponse(
  answer: string,
  opts: {
    exists: (identity: string) => boolean;
    passed: ReadonlySet<string>;
    /** Identities named inside passed documents' content (model-request.ts referencedIdentities). */
    referenced?: ReadonlySet<string>;
    /** Figures the context holds (answer-numbers.ts contextNumbers); set → any other figure is refused. */
    numbers?: ReadonlySet<number>;
    /**
     * The ModelRequest the answer replies to: what it quotes is not a claim, and the names it spells
     * are known. Defaults to the one `contextNumbers(req)` carries in `numbers`.
     */
    request?: ModelRequest;
    /** Whether a workspace document bears this display name; defaults to the turn's cached resolver index. */
    documentNamed?: (name: string) => boolean;
    maxChars?: number;
  },
): ValidationResult {
  const issues: ValidationIssue[] = [];
  const citations = extractCitations(answer);
  const trimmed = answer.trim();
  if (!trimmed) issues.push({ code: "empty_answer" });
  if (trimmed.length > (opts.maxChars ?? 8000)) issues.push({ code: "too_long", detail: String(trimmed.length) });
  const stripped = answer.replace(CITATION_RE, "");
  if (/\[\[|\]\]/.test(stripped)) issues.push({ code: "malformed_citation" });
  if (/^\s*[{[]/.test(trimmed) && isJson(trimmed)) issues.push({ code: "raw_json" });
  const passedFolded = new Set([...opts.passed].map(fold));
  // every identity the context showed is citable: a passed document, or one a passed document names
  // inside its content (a form's entity, a related report) — the prompt asks for [[identity]]
  const shown = new Set([...passedFolded, ...[...(opts.referenced ?? [])].map(fold)]);
  for (const c of citations) {
    if (!opts.exists(c)) issues.push({ code: "unknown_identity", detail: c });
    else if (!shown.has(fold(c))) issues.push({ code: "not_in_context", detail: c });
  }
  for (const b of bareIdentities(stripped, opts.exists, shown)) issues.push(b);
  const ctx = contextOf(opts);
  const claim = findClaimedChange(stripped, ctx.text);
  if (claim) issues.push({ code: "claimed_change", detail: claim });
  if (ctx.known)
    for (const name of inventedDocuments(answer, ctx.known)) issues.push({ code: "invented_document", detail: name });
  if (opts.numbers instanceof ContextFigures) {
    const seen = new Set<string>();
    for (const f of unsupportedFigures(answer, opts.numbers)) {
      const detail = f.noun && !f.measure ? `${f.text} (${f.noun})` : f.text;
      if (!seen.has(detail)) issues.push({ code: "unsupported_number", detail });
      seen.add(detail);
    }
  } else if (opts.numbers)
    for (const n of unsupportedNumbers(answer, opts.numbers))
      issues.push({ code: "unsupported_number", detail: String(n) });
  return { ok: issues.length === 0, issues, citations };
}

type Options = Parameters<typeof validateResponse>[1];
interface CheckContext {
  text?: string;
  /** Undefined when nothing is known to check names against (no request, no workspace lookup). */
  known?: (name: string) => boolean;
}
const contexts = new WeakMap<object, CheckContext>();

/** What the answer is checked against, built once per options object (a gate checks every sentence). */
function contextOf(opts: Options): CheckContext {
  const hit = contexts.get(opts);
  if (hit) return hit;
  const req = opts.request ?? (opts.numbers instanceof ContextFigures ? opts.numbers.request : undefined);
  const idx = req ? peekIndex(req.workspace.snapshotSha256) : undefined;
  const workspaceHas = opts.documentNamed ?? (idx ? (name: string) => hasDocumentNamed(idx, name) : undefined);
  const out: CheckContext = {
    ...(req ? { text: contextText(req) } : {}),
    ...(req || workspaceHas ? { known: nameLookup(req, workspaceHas) } : {}),
  };
  contexts.set(opts, out);
  return out;
}

const DOCUMENT_PREFIXES = ["composition", "form", "entity", "report", "folder", "process"];

/**
 * Identities written without [[…]]: one of the workspace that was not given to the model is
 * `not_in_context`; an unknown one shaped like the given ones (same prefix, «composition-…») is
 * `unknown_identity`. Other hyphenated words («e-mail», «cash-flow») are left alone.
 */
function bareIdentities(
  text: string,
  exists: (identity: string) => boolean,
  passed: ReadonlySet<string>,
): ValidationIssue[] {
  // Shaped like a workspace identity: the prefix of one given, or of a document type («report-…»).
  const prefixes = new Set([
    ...[...passed].map((p) => p.split(/[-_.]/)[0]!).filter((p) => p.length >= 3),
    ...DOCUMENT_PREFIXES,
  ]);
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  const tokens = [
    ...text.matchAll(new RegExp(IDENTITY_RE.source, "giu")),
    ...text.matchAll(new RegExp(UUID_RE.source, "gi")),
  ].map((m) => m[0].replace(/\.$/, ""));
  for (const tok of tokens) {
    const f = fold(tok);
    if (seen.has(f) || passed.has(f)) continue;
    seen.add(f);
    if (exists(tok)) out.push({ code: "not_in_context", detail: tok });
    else if (prefixes.has(f.split(/[-_.]/)[0]!) && /[-_]/.test(f)) out.push({ code: "unknown_identity", detail: tok });
  }
  return out;
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
