// Stage 12: algorithmic checks of the final answer — every [[identity]] exists in the snapshot and
// was passed to the model, the format holds, and the answer claims no change the Workbench never
// made (domain mutations are outside this flow).
import { fold } from "./text";

export interface ValidationIssue {
  code: "unknown_identity" | "not_in_context" | "empty_answer" | "malformed_citation" | "too_long" | "claimed_change" | "raw_json";
  detail?: string;
}

export interface ValidationResult {
  ok: boolean;
  issues: ValidationIssue[];
  citations: string[];
}

const CITATION_RE = /\[\[([^\[\]\n]{1,256})\]\]/g;

// First-person or perfective claims of having changed the workspace. Descriptions of the
// workspace's own history ("заменена в 2025 году") are not claims and must not match.
const CLAIM_RES = [
  /(?:^|[^\p{L}])я\s+(?:уже\s+)?(?:изменил|обновил|удалил|создал|переименовал|перен[её]с|переместил|добавил|исправил|сохранил|опубликовал|заменил|внес)[а-яё]*/iu,
  /(?:^|[\s.!,])(?:изменил|обновил|удалил|создал|переименовал|переместил|добавил|исправил|сохранил|опубликовал)(?:а|и)?\s+(?:для вас|за вас|ваш|вашу|ваше|документ|композицию|сущность|форму|отчет|отчёт|папку)/iu,
  /изменения\s+(?:были\s+)?(?:внесены|сохранены|применены)/iu,
  /(?:готово|сделано)[,!.]?\s+(?:я\s+)?(?:изменил|удалил|создал|обновил|переименовал)/iu,
  /\bI\s+(?:have\s+)?(?:changed|updated|deleted|created|renamed|moved)\b/i,
];

export function extractCitations(answer: string): string[] {
  return [...new Set([...answer.matchAll(CITATION_RE)].map((m) => m[1]!.trim()))];
}

export function validateResponse(
  answer: string,
  opts: { exists: (identity: string) => boolean; passed: ReadonlySet<string>; maxChars?: number },
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
  for (const c of citations) {
    if (!opts.exists(c)) issues.push({ code: "unknown_identity", detail: c });
    else if (!passedFolded.has(fold(c))) issues.push({ code: "not_in_context", detail: c });
  }
  const claim = CLAIM_RES.map((re) => re.exec(stripped)).find(Boolean);
  if (claim) issues.push({ code: "claimed_change", detail: claim[0].trim() });
  return { ok: issues.length === 0, issues, citations };
}

function isJson(s: string): boolean {
  try { JSON.parse(s); return true; } catch { return false; }
}
