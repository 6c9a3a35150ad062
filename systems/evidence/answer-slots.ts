// The Evidence answer's slots (doc/evidence.md): what `{F3.amount}`, `{F3}`, `{K0}`, `{S1}` render
// to, from this run's EvidenceBundle and the package the engine composed from it and from the
// CoverageReport. A fact renders only its own fields — its sign decides the direction («наш долг»
// or «аванс»), its filter decides what an empty result says — so the model cannot restate a fact
// with another sign, period or party. Conclusions come only from the composed package (`{K0}` is
// the conclusion the outcome class allows; `{U#}` what was not established), never from the model.
// `{P#}`, `{N#}`, `{U#}`, `{S#}`: the composed blocks' items (checked, found, not established, next).
import type { Slot, SlotValue } from "../../driver/closed-text";
import type { EvidenceBundle, Fact, FinalAnswerPackage } from "./artifacts";
import { money, ruDate } from "./evidence-builder";

export interface SlotSources {
  bundle: EvidenceBundle;
  draft: FinalAnswerPackage;
}

const PARTY_TYPES = new Set(["open_balance", "balance", "unclosed_document", "payment", "entity_binding"]);
const BALANCE_TYPES = new Set(["open_balance", "balance"]);
const str = (v: unknown) => (v === null || v === undefined ? "" : String(v));
const amountOf = (f: Fact) => (typeof f.value === "number" && Number.isFinite(f.value) ? f.value : null);

function documentName(f: Fact): string | null {
  const d = f.details;
  if (f.type === "unclosed_document" || f.type === "closing_document")
    return `${str(d.kind)} № ${str(d.number)} от ${ruDate(str(d.date))}`;
  if (f.type === "payment") return `оплата № ${str(d.number)} от ${ruDate(str(d.date))}`;
  return null;
}

function dateOf(f: Fact): string | null {
  const d = f.details;
  if (f.type === "as_of_date") return ruDate(str(f.value));
  if (f.type === "unclosed_document" || f.type === "payment" || f.type === "closing_document")
    return d.date ? ruDate(str(d.date)) : null;
  if (f.type === "document_movement") return d.period ? ruDate(str(d.period).slice(0, 10)) : null;
  return f.as_of_date ? ruDate(f.as_of_date) : null;
}

/** The direction a fact's sign gives: who owes whom. */
function directionOf(f: Fact): string | null {
  const v = amountOf(f);
  if (BALANCE_TYPES.has(f.type) && v !== null)
    return v > 0
      ? "наш долг поставщику"
      : v < 0
        ? "выданный поставщику аванс: поставка на эту сумму ещё не отражена"
        : "расчёты закрыты";
  if (f.type === "unclosed_document") return "не оплачено нами поставщику";
  if (f.type === "payment") return "наш платёж поставщику";
  return null;
}

function kindOf(f: Fact): string | null {
  const v = amountOf(f);
  if (BALANCE_TYPES.has(f.type) && v !== null)
    return v > 0
      ? f.type === "balance"
        ? "сальдо расчётов (наш долг)"
        : "остаток задолженности"
      : v < 0
        ? "выданный аванс"
        : "нулевой остаток";
  if (f.type === "unclosed_document") return "неоплаченный остаток документа";
  if (f.type === "payment") return "оплата";
  if (f.type === "closing_document") return str(f.details.kind) || null;
  if (f.type === "document_movement") return "движение по регистру";
  return null;
}

/** A fact stated whole, the way the composed answer states it. */
export function factStatement(f: Fact): string {
  const d = f.details;
  const v = amountOf(f) ?? 0;
  switch (f.type) {
    case "open_balance":
    case "balance": {
      const on = f.as_of_date ? ` на ${ruDate(f.as_of_date)}` : "";
      if (v < 0) return `${f.entity}: выданный аванс ${money(-v)}${on}, поставка на эту сумму ещё не отражена`;
      if (v === 0) return `${f.entity}: расчёты закрыты${on}`;
      const overdue = Number(d.overdue_amount ?? 0);
      return `${f.entity}: остаток ${money(v)}${on} — наш долг поставщику${d.contract ? ` по договору ${str(d.contract)}` : ""}${overdue > 0 ? `, из них просрочено ${money(overdue)}` : ""}`;
    }
    case "unclosed_document":
      return `${f.entity}: не оплачено по документу ${documentName(f)} — ${money(v)} из ${money(Number(d.amount))}${d.posted === false ? " (документ не проведён)" : ""}`;
    case "payment":
      return `${f.entity}: ${documentName(f)} — ${money(v)}${d.posted === false ? ", не проведена" : ""}`;
    case "no_open_balance":
      // An empty result is stated for the filter it was queried under (§12.3), never broader.
      return `${d.overdue_only ? "просроченных остатков" : "ненулевых остатков"} по поставщикам${f.as_of_date ? ` на ${ruDate(f.as_of_date)}` : ""} в регистре нет (просмотрено движений: ${str(d.movements_scanned)})`;
    case "entity_binding":
      return `«${str(d.surface)}» — это ${f.entity} (ИНН ${str(f.value)})`;
    case "as_of_date":
      return `дата отсечения — ${ruDate(str(f.value))}`;
    case "closing_document":
      return `${documentName(f)} на ${money(v)}`;
    case "document_movement":
      return `движение по регистру «${f.entity}» на ${money(v)}${dateOf(f) ? ` от ${dateOf(f)}` : ""}`;
    default:
      return `${f.entity}: ${str(f.value)}`;
  }
}

/** One field of a fact; null: the fact has no such field. */
function fieldOf(f: Fact, field: string): string | null {
  const d = f.details;
  const v = amountOf(f);
  switch (field) {
    case "party":
      return PARTY_TYPES.has(f.type) ? f.entity : null;
    case "amount":
      return v !== null && !["entity_binding", "as_of_date", "no_open_balance"].includes(f.type)
        ? money(Math.abs(v))
        : null;
    case "date":
      return dateOf(f);
    case "document":
      return documentName(f);
    case "kind":
      return kindOf(f);
    case "direction":
      return directionOf(f);
    case "contract":
      return d.contract ? str(d.contract) : null;
    case "overdue":
      return BALANCE_TYPES.has(f.type) && d.overdue_amount !== undefined ? money(Number(d.overdue_amount)) : null;
    case "total":
      return f.type === "unclosed_document" && d.amount !== undefined ? money(Number(d.amount)) : null;
    case "paid":
      return f.type === "unclosed_document" && d.paid !== undefined ? money(Number(d.paid)) : null;
    default:
      return null;
  }
}

export const FACT_FIELDS = [
  "party",
  "amount",
  "date",
  "document",
  "kind",
  "direction",
  "contract",
  "overdue",
  "total",
  "paid",
] as const;

const citedIn = (text: string) => [...new Set([...text.matchAll(/\[(F\d+)\]/g)].map((m) => m[1]!))];

/** Renders slots from this run's bundle and composed package; anything else is refused. */
export function createSlotResolver(s: SlotSources): (slot: Slot) => SlotValue {
  const facts = new Map(s.bundle.facts.map((f) => [f.fact_id, f]));
  const claims = new Map(s.draft.claims.map((c) => [c.claim_id, c]));
  // `{K#}` is the package's claim by position — `{K0}` the conclusion, which leads «Коротко» — and
  // `{C#}` by its claims-menu id.
  s.draft.claims.forEach((c, k) => {
    if (!claims.has(`K${k}`)) claims.set(`K${k}`, { ...c, claim_id: `K${k}` });
  });
  const items: Record<string, string[]> = {
    S: s.draft.blocks.next_step,
    P: s.draft.blocks.checked,
    N: s.draft.blocks.found.map((x) => x.trim()),
    U: s.draft.blocks.not_established,
  };
  return (slot) => {
    const letter = slot.ref[0]!;
    const n = Number(slot.ref.slice(1));
    if (letter === "F") {
      const f = facts.get(slot.ref);
      if (!f) return { ok: false, issue: `факта ${slot.ref} нет в данных этой проверки` };
      if (!slot.field) return { ok: true, text: `${factStatement(f)} [${f.fact_id}]`, facts: [f.fact_id] };
      const text = fieldOf(f, slot.field);
      return text === null
        ? { ok: false, issue: `у факта ${slot.ref} (${f.type}) нет поля «${slot.field}»` }
        : { ok: true, text, facts: [f.fact_id] };
    }
    if (slot.field) return { ok: false, issue: `у ${slot.ref} нет полей` };
    if (letter === "K" || letter === "C") {
      const c = claims.get(slot.ref);
      if (!c) return { ok: false, issue: `утверждения ${slot.ref} нет в собранном ответе` };
      const cites = c.evidence_ids.map((id) => `[${id}]`).join("");
      const text =
        c.kind === "evidence" && cites
          ? `${c.text} ${cites}`
          : c.kind === "inference" && c.claim_id !== "K0"
            ? `${c.text} (вывод)`
            : c.text;
      return { ok: true, text, facts: c.evidence_ids };
    }
    const list = items[letter];
    const text = list?.[n - 1];
    if (text === undefined) return { ok: false, issue: `пункта ${slot.ref} нет в собранном ответе` };
    return { ok: true, text, facts: citedIn(text) };
  };
}

/** Field slots of one sentence state one fact: a figure never travels to another fact's party or kind. */
export function oneFactPerSentence(slots: Slot[], values: SlotValue[]): string[] {
  const owners = new Set<string>();
  slots.forEach((s, k) => {
    const v = values[k]!;
    if (s.field && v.ok) for (const f of v.facts) owners.add(f);
  });
  return owners.size > 1
    ? [`поля разных фактов (${[...owners].join(", ")}) в одном предложении: каждое утверждение — об одном факте`]
    : [];
}

/** The slots the answer model may use, with what each renders to (the model's input). */
export function answerSlotCatalogue(bundle: EvidenceBundle, draft: FinalAnswerPackage) {
  const numbered = (prefix: string, xs: string[]) => Object.fromEntries(xs.map((x, k) => [`${prefix}${k + 1}`, x]));
  return {
    claims: Object.fromEntries(draft.claims.map((c) => [c.claim_id, c.text])),
    facts: Object.fromEntries(
      bundle.facts.map((f) => [
        f.fact_id,
        {
          whole: factStatement(f),
          ...Object.fromEntries(
            FACT_FIELDS.map((k): [string, string | null] => [k, fieldOf(f, k)]).filter((e) => e[1] !== null),
          ),
        },
      ]),
    ),
    checked: numbered("P", draft.blocks.checked),
    found: numbered(
      "N",
      draft.blocks.found.map((x) => x.trim()),
    ),
    not_established: numbered("U", draft.blocks.not_established),
    next_steps: numbered("S", draft.blocks.next_step),
  };
}

/** The composed package written in the contract: every block item as its slot (what a model that only selects writes). */
export function draftTemplate(draft: FinalAnswerPackage, headings: readonly string[]): string {
  const b = draft.blocks;
  const block = (k: number, prefix: string, xs: string[]) =>
    xs.length
      ? [`${headings[k]}\n${xs.map((x, n) => `${x.startsWith("  ") ? "  " : ""}- {${prefix}${n + 1}}`).join("\n")}`]
      : [];
  return [
    `${headings[0]} {K0}`,
    ...block(1, "P", b.checked),
    ...block(2, "N", b.found),
    ...block(3, "U", b.not_established),
    ...block(4, "S", b.next_step),
  ].join("\n\n");
}
