// The claims menu of one run (doc/evidence.md, "The answer contract"): every sentence the answer
// may show, rendered by the engine from the EvidenceBundle and the CoverageReport. A claim's
// meaning is fixed by its kind — an open balance, an advance paid, a total over named facts, a gap
// — and its kind fixes the blocks it may stand in; its provenance is the fact ids it states. The
// answer model only chooses claims (answer-choice.ts): it never writes a fact, so a field under
// another field's words, swapped parties or an advance stated as a debt cannot be composed.

/** The five blocks of seed 002 §9.1, in the order they are rendered. */
export const ANSWER_BLOCKS = ["short", "checked", "found", "not_established", "next_step"] as const;
export type AnswerBlock = (typeof ANSWER_BLOCKS)[number];

export const BLOCK_RU: Record<AnswerBlock, string> = {
  short: "Коротко",
  checked: "Что проверено",
  found: "Что найдено",
  not_established: "Что не удалось установить",
  next_step: "Что уточнить / следующий шаг",
};

const SHORT_OR_FOUND: AnswerBlock[] = ["short", "found"];

/** Each kind of claim and the blocks its meaning belongs to: the only places it may be shown. */
export const KIND_BLOCKS = {
  /** The conclusion the outcome class allows (the CoverageReport's, never the model's). */
  conclusion: ["short"],
  premise: ["checked"],
  binding: ["checked"],
  sources: ["checked"],
  method: ["checked"],
  open_balance: SHORT_OR_FOUND,
  advance_paid: SHORT_OR_FOUND,
  overdue_part: SHORT_OR_FOUND,
  document_unpaid: ["found"],
  document_without_invoice: ["found"],
  payment: ["found"],
  payment_not_posted: ["found"],
  conflict: ["found"],
  no_open_balance: SHORT_OR_FOUND,
  no_facts: ["found"],
  /** Derived by the engine over named facts (claims-derived.ts). */
  total: SHORT_OR_FOUND,
  count: SHORT_OR_FOUND,
  earliest_due: SHORT_OR_FOUND,
  latest_due: SHORT_OR_FOUND,
  difference: SHORT_OR_FOUND,
  gap: ["not_established"],
  no_gaps: ["not_established"],
  next_step: ["next_step"],
  clarifying_question: ["next_step"],
  nothing_to_clarify: ["next_step"],
} as const satisfies Record<string, readonly AnswerBlock[]>;
export type ClaimKind = keyof typeof KIND_BLOCKS;

/** What a derived claim is computed over: lets the engine pick the one a direct question asks for. */
/** What a derived claim is over; `no_invoice`: the documents whose closing documents were read and hold no invoice. */
export type ClaimSubject = "suppliers" | "advances" | "overdue" | "documents" | "no_invoice" | "payments";

export interface MenuClaim {
  id: string;
  kind: ClaimKind;
  /** The sentence as the user sees it, citations included. */
  text: string;
  /** Provenance: the fact ids the sentence states. */
  facts: string[];
  /** Rendered in this block whatever the model chose (the CoverageReport makes it mandatory). */
  mandatory: AnswerBlock | null;
  /** A document listed under its party's balance: `nested` is its text there, `text` stands alone. */
  parent?: string;
  nested?: string;
  subject?: ClaimSubject;
}

/** The engine's own choice: what the offline path and the composed draft render. */
export type BlockChoice = Record<AnswerBlock, string[]>;

export interface ClaimsMenu {
  claims: MenuClaim[];
  engine: BlockChoice;
  /** The user's words this turn (the question, the premises they confirmed or carried over): the model's free text may restate them. */
  said?: string[];
  /** A tool failed this run: the free text may say that something could not be done («получить данные не удалось»). */
  faulted?: boolean;
}

export const emptyChoice = (): BlockChoice => ({
  short: [],
  checked: [],
  found: [],
  not_established: [],
  next_step: [],
});

/** Collects claims with ids in menu order; `add` returns the id. */
export function menuBuilder() {
  const claims: MenuClaim[] = [];
  return {
    claims,
    add(c: Omit<MenuClaim, "id" | "mandatory"> & { mandatory?: AnswerBlock | null }): string {
      const id = `C${claims.length + 1}`;
      claims.push({ ...c, id, mandatory: c.mandatory ?? null });
      return id;
    },
  };
}

export const citeIds = (ids: readonly string[]) => ids.map((id) => `[${id}]`).join("");
