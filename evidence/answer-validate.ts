// Checks the answer model's prose before it is shown as the answer: the five blocks are there,
// every [F#] cites a fact that exists, and no amount appears that the evidence does not hold.
import type { EvidenceBundle } from "./artifacts";
import { BLOCK_TITLES } from "./compose";

export interface AnswerValidation {
  ok: boolean;
  issues: string[];
  citations: string[];
}

const amounts = (text: string): number[] =>
  [...text.replace(/\[F\d+\]/g, " ").matchAll(/\d{1,3}(?:[ \u00a0]\d{3})+(?:[.,]\d{1,2})?|\d{4,}(?:[.,]\d{1,2})?/g)]
    .map((m) => Number(m[0].replace(/[ \u00a0]/g, "").replace(",", ".")))
    .filter((n) => Number.isFinite(n));

export function validateAnswer(text: string, bundle: EvidenceBundle, draft: string): AnswerValidation {
  const issues: string[] = [];
  const lower = text.toLowerCase();
  for (const t of BLOCK_TITLES) if (!lower.includes(t.toLowerCase().split(" / ")[0]!)) issues.push(`нет блока «${t}»`);
  const ids = new Set(bundle.facts.map((f) => f.fact_id));
  const citations = [...new Set([...text.matchAll(/\[(F\d+)\]/g)].map((m) => m[1]!))];
  for (const c of citations) if (!ids.has(c)) issues.push(`ссылка на несуществующий факт ${c}`);
  // Amounts and years must come from the evidence or the draft built from it.
  const allowed = new Set<number>(amounts(draft));
  for (const f of bundle.facts) {
    if (typeof f.value === "number") allowed.add(Math.abs(f.value));
    for (const v of Object.values(f.details)) if (typeof v === "number") allowed.add(Math.abs(v));
    for (const n of amounts(JSON.stringify(f.details))) allowed.add(n);
    for (const n of amounts(String(f.value ?? ""))) allowed.add(n);
  }
  for (const n of amounts(text)) if (!allowed.has(n) && !(n >= 1990 && n <= 2100)) issues.push(`сумма ${n} не подтверждена фактами`);
  return { ok: issues.length === 0, issues, citations };
}
