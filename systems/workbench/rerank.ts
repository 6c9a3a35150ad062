// Semantic reranker gate and output validation (seed 001 §6, CONTRACT §3.5). The model sees only
// the closed candidate list; its answer is a candidateId from that list, "none" or "clarify".
// Anything else — invalid JSON, an unknown id, an identity — is no answer.
import { z } from "zod";
import { CLOSE_MARGIN, MAX_CANDIDATES } from "./resolve";
import type { TaskResolution } from "./types";

export const RerankerOutputSchema = z.object({ choice: z.string().min(1).max(64) }).strict();

export type RerankDecision =
  | { kind: "choose"; candidateId: string; identity: string }
  | { kind: "none" }
  | { kind: "clarify" }
  | { kind: "invalid"; reason: string };

/** Call the reranker only for several close candidates of one ambiguous task — never for a list of one. */
export function rerankGate(r: TaskResolution): { call: boolean; reason: string } {
  if (r.status !== "ambiguous") return { call: false, reason: "not_ambiguous" };
  if (r.candidates.length < 2) return { call: false, reason: "single_candidate" };
  if (r.candidates.length > MAX_CANDIDATES) return { call: false, reason: "too_many_candidates" };
  const top = r.candidates[0]!.score;
  if (r.candidates.some((c) => c.score < top - CLOSE_MARGIN - 1e-9)) return { call: false, reason: "not_close" };
  return { call: true, reason: "close_candidates" };
}

export function validateRerankerOutput(raw: unknown, r: TaskResolution): RerankDecision {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return { kind: "invalid", reason: "invalid_json" };
    }
  }
  const parsed = RerankerOutputSchema.safeParse(value);
  if (!parsed.success) return { kind: "invalid", reason: "schema" };
  const choice = parsed.data.choice;
  if (choice === "none") return { kind: "none" };
  if (choice === "clarify") return { kind: "clarify" };
  const c = r.candidates.find((x) => x.candidateId === choice);
  if (!c) return { kind: "invalid", reason: "outside_closed_list" };
  return { kind: "choose", candidateId: c.candidateId, identity: c.identity };
}

/** Apply a validated choice: the task becomes resolved by the reranker, the list stays as evidence. */
export function applyRerank(r: TaskResolution, d: RerankDecision): TaskResolution {
  if (d.kind !== "choose") return r;
  return {
    ...r,
    status: "resolved",
    resolvedIdentity: d.identity,
    resolvedBy: "reranker",
    candidates: r.candidates.map((c) =>
      c.candidateId === d.candidateId ? { ...c, signals: [...c.signals, "reranker"] } : c,
    ),
  };
}
