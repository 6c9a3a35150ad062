// The answer model's structured choice over the claims menu (claims-menu.ts), and the one renderer
// of every Evidence answer — the model's, the offline one and the draft. The model returns which
// claims answer the question, in what order and under which block; the engine states them. A claim
// id the menu lacks, a claim in a block its kind does not belong to, a repeat, and free text that
// is not provably fact-free are refused with a reason (`issues`, kept in the trace) and left out;
// what the CoverageReport makes mandatory (the conclusion in «Коротко», gaps, assumptions, a
// conflict, the clarifying question) is rendered whatever the model chose. Pure: no model, no SQL.
import { z } from "zod";
import type { Claim, FinalAnswerPackage } from "./artifacts";
import { factFreeIssues } from "./free-text";
import { ANSWER_BLOCKS, BLOCK_RU, KIND_BLOCKS, type AnswerBlock, type ClaimsMenu, type MenuClaim } from "./claims-menu";

const ids = z.array(z.string().max(40)).max(40);

/** What the answer model returns (structured output). Every block is required: `{}` is no choice. */
export const AnswerChoice = z
  .object({
    /** A polite opening line without facts (no figures, dates, names, meaning words), or null. */
    opening: z.string().max(400).nullable().optional(),
    short: ids,
    checked: ids,
    found: ids,
    not_established: ids,
    next_step: ids,
    /** A closing line without facts, or null. */
    closing: z.string().max(400).nullable().optional(),
  })
  // A field the schema lacks (a model's own «summary», «text») is kept only to be refused by name.
  .catchall(z.unknown());
export type AnswerChoice = z.infer<typeof AnswerChoice>;
const CHOICE_FIELDS = new Set<string>(["opening", "closing", ...ANSWER_BLOCKS]);

export interface ResolvedAnswer {
  blocks: Record<AnswerBlock, MenuClaim[]>;
  opening: string | null;
  closing: string | null;
  /** What was refused or added, and why (empty: the model's choice is shown as it chose it). */
  issues: string[];
}

/** `C3`, `{C3}`, `[C3]`, ` c3 ` → `C3`: the id a model meant, never a guess at another one. */
const normalizeId = (raw: string) =>
  raw
    .trim()
    .replace(/^[{[("'«]+|[}\])"'»]+$/g, "")
    .trim()
    .toUpperCase();

export function resolveChoice(menu: ClaimsMenu, choice: AnswerChoice): ResolvedAnswer {
  const byId = new Map(menu.claims.map((c) => [c.id, c]));
  const blocks = Object.fromEntries(ANSWER_BLOCKS.map((b) => [b, [] as MenuClaim[]])) as ResolvedAnswer["blocks"];
  const placed = new Set<string>();
  const issues: string[] = [];
  for (const block of ANSWER_BLOCKS)
    for (const raw of choice[block]) {
      const id = normalizeId(raw);
      const c = byId.get(id);
      const where = `«${BLOCK_RU[block]}»`;
      if (!c) issues.push(`${where}: утверждения «${raw.slice(0, 40)}» нет в меню этой проверки — отброшено`);
      else if (!(KIND_BLOCKS[c.kind] as readonly AnswerBlock[]).includes(block))
        issues.push(`${where}: ${id} (${c.kind}) не может стоять в этом блоке — отброшено`);
      else if (placed.has(id)) issues.push(`${where}: ${id} уже выбрано — повтор отброшен`);
      else {
        placed.add(id);
        blocks[block].push(c);
      }
    }
  // Mandatory claims: the conclusion leads «Коротко»; a gap, an assumption, a conflict or the clarifying question is never left out.
  for (const c of menu.claims) {
    if (!c.mandatory || blocks[c.mandatory].includes(c)) continue;
    // Chosen under another block (the asked total under «Что найдено»): it moves to the block that must hold it.
    const moved = placed.has(c.id);
    if (moved) for (const b of ANSWER_BLOCKS) blocks[b] = blocks[b].filter((x) => x !== c);
    placed.add(c.id);
    issues.push(
      `${c.id} (${c.kind}) обязателен в блоке «${BLOCK_RU[c.mandatory]}» — ${moved ? "перенесён" : "добавлен"}`,
    );
    const list = blocks[c.mandatory];
    if (c.kind === "conclusion") list.unshift(c);
    else list.push(c);
  }
  // The conclusion leads «Коротко» wherever the model put it in the list.
  blocks.short.sort((a, z) => Number(z.kind === "conclusion") - Number(a.kind === "conclusion"));
  for (const key of Object.keys(choice).filter((k) => !CHOICE_FIELDS.has(k)))
    issues.push(`поле «${key.slice(0, 40)}» не из схемы ответа — отброшено`);
  const free = (field: "opening" | "closing") => {
    const text = choice[field]?.trim() ?? "";
    const why = factFreeIssues(text, menu.said ?? [], !!menu.faulted);
    if (why.length) issues.push(`${field}: текст модели отброшен — ${why.join("; ")}`);
    return text && !why.length ? text : null;
  };
  return { blocks, opening: free("opening"), closing: free("closing"), issues };
}

/** The rendered answer as a FinalAnswerPackage: what the user sees, block by block, with the chosen claims. */
export function packageOf(
  r: ResolvedAnswer,
  clarifying: string | null,
  by: FinalAnswerPackage["composed_by"],
): FinalAnswerPackage {
  const found = r.blocks.found.map((c, k) => {
    const prev = r.blocks.found[k - 1];
    // A document sits under its party's balance only when it follows it (or a sibling) there.
    const under = c.parent && c.nested && prev && (prev.id === c.parent || prev.parent === c.parent);
    return under ? `  ${c.nested}` : c.text;
  });
  const blocks: FinalAnswerPackage["blocks"] = {
    direct: r.blocks.short.map((c) => c.text).join(" "),
    checked: r.blocks.checked.map((c) => c.text),
    found,
    not_established: r.blocks.not_established.map((c) => c.text),
    next_step: r.blocks.next_step.map((c) => c.text),
  };
  const text = [r.opening, render(blocks), r.closing].filter(Boolean).join("\n\n");
  const claims: Claim[] = ANSWER_BLOCKS.flatMap((b) => r.blocks[b]).map((c) => ({
    claim_id: c.id,
    text: c.text,
    kind: c.facts.length ? "evidence" : c.kind === "gap" || c.kind === "no_facts" ? "unknown" : "inference",
    evidence_ids: c.facts,
  }));
  return {
    short_answer: blocks.direct,
    user_facing_answer: text,
    blocks,
    evidence_summary: found.map((f) => f.trim()),
    limitations: blocks.not_established,
    clarifying_question: clarifying,
    claims,
    composed_by: by,
  };
}

/** The menu as the answer model sees it: ids, kinds, where each may stand, and the engine's sentence. */
export function menuForModel(menu: ClaimsMenu) {
  return menu.claims.map((c) => ({
    id: c.id,
    kind: c.kind,
    blocks: KIND_BLOCKS[c.kind],
    text: c.text,
    facts: c.facts,
    ...(c.mandatory ? { mandatory: c.mandatory } : {}),
  }));
}

/** The blocks as Markdown; a block with nothing in it is left out rather than shown empty. */
export function render(b: FinalAnswerPackage["blocks"]): string {
  const list = (xs: string[]) => xs.map((x) => (x.startsWith("  ") ? `  - ${x.trim()}` : `- ${x}`)).join("\n");
  const parts: [string, string[]][] = [
    [BLOCK_RU.checked, b.checked],
    [BLOCK_RU.found, b.found],
    [BLOCK_RU.not_established, b.not_established],
    [BLOCK_RU.next_step, b.next_step],
  ];
  return [
    `**${BLOCK_RU.short}.** ${b.direct}`,
    ...parts.filter(([, xs]) => xs.length).map(([title, xs]) => `**${title}.**\n${list(xs)}`),
  ].join("\n\n");
}
