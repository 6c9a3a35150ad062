// Claims the composed draft does not list but a true answer may need: one field of a fact under
// its own words (the overdue part, a payment not posted, a document without its invoice), and what
// the engine derives over named facts — totals, counts, the earliest and latest due date, a
// difference — each with the fact ids it was computed from. A direct question («Сколько всего…?»,
// «До какого числа…?», «Сколько документов…?») gets the derived claim it asks for in «Коротко»
// when the run's facts allow it; the model may choose the same claims, never compute its own.
import type { EvidenceBundle, Fact, ToolRun } from "./artifacts";
import { citeIds, type ClaimKind, type ClaimSubject, type MenuClaim, type menuBuilder } from "./claims-menu";
import { money, ruDate } from "./evidence-builder";
import { asksDueDate } from "./due-question";
import type { OutcomeClass } from "./reason-codes";

type Add = ReturnType<typeof menuBuilder>["add"];

const sum = (fs: Fact[], of: (f: Fact) => number = (f) => f.value as number) => fs.reduce((s, f) => s + of(f), 0);
const ids = (fs: Fact[]) => fs.map((f) => f.fact_id);
const withCites = (text: string, fs: Fact[]) => `${text} ${citeIds(ids(fs))}`;
const docName = (d: Fact) =>
  `${String(d.details.kind)} № ${String(d.details.number)} от ${ruDate(String(d.details.date))}`;

/**
 * Balances per counterparty: a party's net figure is over all of its balance facts. `dated` adds the
 * facts that hold its payment terms (`due_date`, read for a party whose balance came from another
 * read): the overdue part and the due date are over those too, the net never is.
 */
function parties(b: EvidenceBundle) {
  const by = new Map<string, Fact[]>();
  const key = (f: Fact) => f.entity_id ?? f.entity;
  for (const f of b.facts.filter((x) => x.type === "open_balance" || x.type === "balance"))
    by.set(key(f), [...(by.get(key(f)) ?? []), f]);
  return [...by.entries()].map(([k, fs]) => ({
    name: fs[0]!.entity,
    facts: fs,
    net: sum(fs),
    dated: [...fs, ...b.facts.filter((t) => t.type === "due_date" && key(t) === k)],
  }));
}
const overdueOf = (fs: Fact[]) => sum(fs, (f) => Number(f.details.overdue_amount ?? 0));
/** The as-of date of the run: a due date before it has expired; on it or after it, it has not. */
const asOfOf = (b: EvidenceBundle) =>
  String(b.facts.find((f) => f.type === "as_of_date")?.value ?? b.facts.find((f) => f.as_of_date)?.as_of_date ?? "");

/** One field of a fact under its own words, where the draft states it only inside a longer sentence or not at all. */
export function factClaims(b: EvidenceBundle, runs: ToolRun[], listed: Set<string>, add: Add) {
  for (const p of parties(b)) {
    const overdue = overdueOf(p.dated);
    if (p.net > 0 && overdue > 0) {
      const due = oldestDue(p.dated);
      add({
        kind: "overdue_part",
        text: withCites(
          `${p.name}: просроченная часть долга — ${money(overdue)} из ${money(p.net)}${due ? `, срок оплаты истёк ${ruDate(due)}` : ""}`,
          p.dated,
        ),
        facts: ids(p.dated),
      });
      if (overdue < p.net)
        add({
          kind: "difference",
          subject: "overdue",
          text: withCites(
            `${p.name}: не просрочено ${money(p.net - overdue)} (остаток ${money(p.net)} минус просроченные ${money(overdue)})`,
            p.dated,
          ),
          facts: ids(p.dated),
        });
    }
  }
  for (const d of b.facts.filter((f) => f.type === "unclosed_document" && !listed.has(f.fact_id)))
    add({
      kind: "document_unpaid",
      text: withCites(
        `${d.entity} — не оплачено: ${docName(d)} — ${money(d.value as number)} из ${money(Number(d.details.amount))}`,
        [d],
      ),
      facts: [d.fact_id],
    });
  for (const p of b.facts.filter((f) => f.type === "payment" && f.details.posted === false))
    add({
      kind: "payment_not_posted",
      text: withCites(
        `${p.entity}: оплата № ${String(p.details.number)} от ${ruDate(String(p.details.date))} на ${money(p.value as number)} введена, но не проведена`,
        [p],
      ),
      facts: [p.fact_id],
    });
  const { without } = invoiceReads(b, runs);
  for (const d of without)
    add({
      kind: "document_without_invoice",
      text: withCites(`${d.entity}: к документу ${docName(d)} счёт-фактура в базе не найдена`, [d]),
      facts: [d.fact_id],
    });
}

/** The unclosed documents whose closing documents were read (`read`), and those of them with no invoice among those (`without`). */
function invoiceReads(b: EvidenceBundle, runs: ToolRun[]) {
  const read = b.facts.filter(
    (d) =>
      d.type === "unclosed_document" &&
      runs.some(
        (r) =>
          r.tool_name === "get_related_closing_documents" &&
          r.input.document_id === d.details.document_id &&
          (r.status === "success" || r.status === "empty"),
      ),
  );
  const without = read.filter(
    (d) =>
      !b.facts.some(
        (f) =>
          f.type === "closing_document" &&
          f.details.for_document_id === d.details.document_id &&
          /фактур/i.test(String(f.details.kind)),
      ),
  );
  return { read, without };
}

const oldestDue = (fs: Fact[]) =>
  fs
    .map((f) => f.details.oldest_due_date)
    .filter((x): x is string => typeof x === "string" && x.length > 0)
    .sort()[0];

/** Totals, counts, earliest/latest due dates and differences over named facts. */
export function derivedClaims(b: EvidenceBundle, runs: ToolRun[], add: Add) {
  const ps = parties(b);
  const debt = ps.filter((p) => p.net > 0);
  const adv = ps.filter((p) => p.net < 0);
  const factsOf = (xs: typeof ps) => xs.flatMap((p) => p.facts);
  const derived = (kind: ClaimKind, subject: ClaimSubject, text: string, fs: Fact[]) =>
    add({ kind, subject, text: withCites(text, fs), facts: ids(fs) });
  const named = (xs: typeof ps, v: (p: (typeof ps)[number]) => number) =>
    xs.map((p) => `${p.name} — ${money(v(p))}`).join("; ");
  if (debt.length) {
    derived(
      "total",
      "suppliers",
      `Всего наш долг перед поставщиками: ${money(sum(factsOf(debt)))} (${debt.length}: ${named(debt, (p) => p.net)})`,
      factsOf(debt),
    );
    derived("count", "suppliers", `Поставщиков, перед которыми у нас долг: ${debt.length}`, factsOf(debt));
  }
  if (adv.length) {
    derived(
      "total",
      "advances",
      `Всего выдано авансов, поставка по которым не отражена: ${money(-sum(factsOf(adv)))} (${adv.length}: ${named(adv, (p) => -p.net)})`,
      factsOf(adv),
    );
    derived("count", "advances", `Поставщиков с невыбранным авансом: ${adv.length}`, factsOf(adv));
  }
  if (debt.length && adv.length) {
    const owe = sum(factsOf(debt));
    const paid = -sum(factsOf(adv));
    derived(
      "difference",
      "suppliers",
      `Наш долг перед поставщиками за вычетом выданных авансов: ${money(owe - paid)} (${money(owe)} минус ${money(paid)})`,
      factsOf([...debt, ...adv]),
    );
  }
  const late = debt.filter((p) => overdueOf(p.dated) > 0);
  if (late.length) {
    const partOf = (p: (typeof ps)[number]) => overdueOf(p.dated);
    derived(
      "total",
      "overdue",
      `Всего просрочено: ${money(late.reduce((s, p) => s + partOf(p), 0))} (${late.length}: ${named(late, partOf)})`,
      late.flatMap((p) => p.dated),
    );
    derived(
      "count",
      "overdue",
      `Поставщиков с просроченным долгом: ${late.length}`,
      late.flatMap((p) => p.dated),
    );
  }
  // A due date is the payment term of the oldest open part of a party's debt: it has expired only
  // when it lies before the as-of date (on the day itself the debt is still payable), and the
  // sentence says which — never «истёк» of a term still running.
  const asOf = asOfOf(b);
  const dated = debt
    .map((p) => ({ p, due: oldestDue(p.dated) }))
    .filter((x): x is { p: (typeof ps)[number]; due: string } => !!x.due)
    .sort((a, z) => a.due.localeCompare(z.due));
  const expired = (due: string) => !!asOf && due < asOf;
  if (dated.length === 1) {
    const { p, due } = dated[0]!;
    derived(
      "earliest_due",
      expired(due) ? "overdue" : "suppliers",
      expired(due)
        ? `Срок оплаты долга перед ${p.name} истёк ${ruDate(due)}`
        : `Срок оплаты долга перед ${p.name} — до ${ruDate(due)} включительно, ещё не истёк`,
      p.dated,
    );
  } else if (dated.length) {
    const first = dated[0]!;
    const last = dated.at(-1)!;
    derived(
      "earliest_due",
      expired(first.due) ? "overdue" : "suppliers",
      expired(first.due)
        ? `Самый ранний срок оплаты по просроченному долгу — ${ruDate(first.due)} (${first.p.name})`
        : `Ближайший срок оплаты долга — ${ruDate(first.due)} (${first.p.name}), ещё не истёк`,
      first.p.dated,
    );
    if (last.due !== first.due)
      derived(
        "latest_due",
        expired(last.due) ? "overdue" : "suppliers",
        expired(last.due)
          ? `Самый поздний из истёкших сроков оплаты — ${ruDate(last.due)} (${last.p.name})`
          : `Самый поздний срок оплаты долга — ${ruDate(last.due)} (${last.p.name}), ещё не истёк`,
        last.p.dated,
      );
  }
  const docs = b.facts.filter((f) => f.type === "unclosed_document");
  if (docs.length) {
    derived("count", "documents", `Документов, не закрытых оплатой: ${docs.length}`, docs);
    derived(
      "total",
      "documents",
      `Всего не оплачено по документам: ${money(sum(docs))} из ${money(sum(docs, (d) => Number(d.details.amount)))}`,
      docs,
    );
    const byDate = [...docs].sort((a, z) => String(a.details.date).localeCompare(String(z.details.date)));
    derived("earliest_due", "documents", `Самый ранний неоплаченный документ — ${docName(byDate[0]!)}`, [byDate[0]!]);
    if (byDate.length > 1)
      derived("latest_due", "documents", `Самый поздний неоплаченный документ — ${docName(byDate.at(-1)!)}`, [
        byDate.at(-1)!,
      ]);
  }
  // Documents without their invoice: counted only over the documents whose closing documents were read.
  const inv = invoiceReads(b, runs);
  if (inv.read.length)
    derived(
      "count",
      "no_invoice",
      `Документов без счёта-фактуры: ${inv.without.length} (проверено документов: ${inv.read.length})`,
      inv.without.length ? inv.without : inv.read,
    );
  const pays = b.facts.filter((f) => f.type === "payment");
  if (pays.length) {
    derived("count", "payments", `Оплат найдено: ${pays.length}`, pays);
    derived("total", "payments", `Всего оплачено: ${money(sum(pays))}`, pays);
  }
}

/** What a direct question asks for, read from the user's words (stems: any inflection). */
function asked(question: string): { kind: ClaimKind; subject: ClaimSubject | null }[] {
  const q = question.toLowerCase().replace(/ё/g, "е");
  const subject: ClaimSubject | null = /аванс/.test(q)
    ? "advances"
    : /просроч/.test(q)
      ? "overdue"
      : /(?:без|нет|отсутств\p{L}*)\s+(?:\p{L}+\s+)?(?:сч\p{L}*[\s-]*фактур|сф(?!\p{L}))|фактур\p{L}*\s+нет/u.test(q)
        ? "no_invoice"
        : /документ|поступлен|накладн|сч[её]т/.test(q)
          ? "documents"
          : /оплат|платеж/.test(q) && !/срок\p{L}*\s+оплат/u.test(q)
            ? "payments"
            : null;
  const out: { kind: ClaimKind; subject: ClaimSubject | null }[] = [];
  // Net of advances: the debt minus the advances paid, not the gross total.
  const net =
    /за\s+вычетом|(?:с\s+учетом|если\s+учесть|учитывая|минус)\s+(?:\p{L}+\s+){0,2}аванс|нетто|свернут|сальдирован/u.test(
      q,
    );
  if (net) out.push({ kind: "difference", subject: "suppliers" });
  else if (
    /сколько\s+всего|всего\s+(?:мы\s+)?(?:долж|задолж|долг)|итог|в\s+сумме|суммарн|общ(?:ая|ий|ую|ей)\s+(?:сумм|долг|задолж)/.test(
      q,
    )
  )
    out.push({ kind: "total", subject });
  // «Сколько/Скольким/По скольким [у нас, всего …] поставщикам/документам …»: a count.
  if (
    /скольк\p{L}*\s+(?:(?:всего|у|нас|же|есть|было|именно|в|базе)\s+)*(?:документ|поступлен|накладн|сч[её]т|поставщик|контрагент|оплат|платеж|организац|компани)/u.test(
      q,
    )
  )
    out.push({ kind: "count", subject });
  if (asksDueDate(q) || /самый\s+(?:ранний|старый)|самая\s+старая/u.test(q))
    // A due date («до какого числа», «срок оплаты») is a contract's term, never a document's own date:
    // only the oldest unpaid document («самый ранний документ») is answered by a document's date.
    out.push({
      kind: /поздн|последн/.test(q) ? "latest_due" : "earliest_due",
      subject:
        /до\s+какого|какого\s+числа|к\s+какому|когда|срок/.test(q) || subject !== "documents" ? "overdue" : subject,
    });
  return out;
}

/** The derived claims that answer the direct question, for the engine's «Коротко». */
export function askedClaims(question: string, claims: MenuClaim[], outcome: OutcomeClass): string[] {
  if (outcome !== "FULLY_ANSWERED" && outcome !== "PARTIALLY_ANSWERED") return [];
  const out: string[] = [];
  for (const a of asked(question)) {
    const of = claims.filter((c) => c.kind === a.kind && c.subject);
    // The subject the question names; else the first subject the run has (suppliers' debt before documents).
    const pick =
      of.find((c) => c.subject === a.subject) ??
      (a.kind.endsWith("_due")
        ? (of.find((c) => c.subject === "overdue") ?? of.find((c) => c.subject === "suppliers"))
        : undefined) ??
      (a.subject ? undefined : of[0]);
    if (pick && !out.includes(pick.id)) out.push(pick.id);
  }
  return out;
}
