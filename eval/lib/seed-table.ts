import type { WorkbenchTurnResult } from "./workbench-run";

/**
 * Seed 001, "Когда вызывается модель": preparatory and final calls allowed per kind of request.
 * A turn's row is its label (`expect.seedRow`) or derived from its other labels.
 */
export const SEED_TABLE = {
  exact: { label: "Точный identity / имя", prep: [0, 0], final: [1, 1] },
  documentation: { label: "Понятный вопрос по документации", prep: [0, 0], final: [1, 1] },
  compound: { label: "Нужен Planner (составной, неявный, ссылка на историю)", prep: [0, 1], final: [1, 1] },
  ambiguous: { label: "Неоднозначная сущность (Reranker)", prep: [0, 1], final: [1, 1] },
  compound_ambiguous: { label: "Сложный план и неоднозначная сущность", prep: [0, 2], final: [1, 1] },
  clarification: { label: "Требуется уточнение", prep: [0, 2], final: [0, 0] },
  // Not a row of the seed's table: an answer to a clarification that needed the classifier
  // (seed 000) — within the same budget of at most two preparatory calls and one final call.
  continuation: { label: "Ответ на уточнение (Classifier)", prep: [0, 2], final: [0, 1] },
} as const satisfies Record<string, { label: string; prep: [number, number]; final: [number, number] }>;

export type SeedRow = keyof typeof SEED_TABLE;

export function seedRowOf(t: WorkbenchTurnResult): SeedRow | null {
  const e = t.expect;
  if (e.seedRow) return e.seedRow;
  if (e.outcome === "clarification") return "clarification";
  if (e.outcome !== "final") return null;
  // A plain answer without the answer model (unsupported, cancelled) has no row.
  if (e.calls?.answer === 0) return null;
  if ((e.calls?.classifier ?? 0) > 0) return "continuation";
  // The labelled calls follow the seed's gates (planner: linked tasks, implicit intent, history
  // reference, low confidence; reranker: close candidates), so they name the row.
  const planner = (e.calls?.planner ?? 0) > 0;
  const reranker = (e.calls?.reranker ?? 0) > 0;
  if (planner && reranker) return "compound_ambiguous";
  if (planner) return "compound";
  if (reranker) return "ambiguous";
  if (e.plan?.every((p) => p.intent === "explain_documentation")) return "documentation";
  const folderPair = e.plan?.length === 2 && e.plan.some((p) => p.folderScope);
  if (e.plan && e.plan.length > 1 && !folderPair) return "compound";
  if (e.resolution?.length && e.resolution.every((r) => r.status === "resolved")) return "exact";
  return null;
}

export function withinRow(row: SeedRow, prep: number, final: number): boolean {
  const r = SEED_TABLE[row];
  return prep >= r.prep[0] && prep <= r.prep[1] && final >= r.final[0] && final <= r.final[1];
}
