// The demo server's domain queries over the acc_* tables. Each returns its tool's output
// contract with the status its empty-result policy prescribes (tool-contracts.ts).
import type { Tx } from "../../../storage/db";
import type { ToolInput, ToolOutput } from "../tool-contracts";
import { DEMO_DATA_FROM, DEMO_WORKING_DATE } from "./demo-data";
import { checkDatePhrase } from "./dates";

const REG = "РегистрНакопления.РасчетыСПоставщиками";
const docRef = (kind: string, id: string) =>
  `${{ receipt: "Документ.ПоступлениеТоваровУслуг", invoice_received: "Документ.СчетФактураПолученный", sale: "Документ.РеализацияТоваровУслуг", payment: "Документ.СписаниеСРасчетногоСчета" }[kind] ?? "Документ"}:${id}`;
const KIND_RU: Record<string, string> = {
  receipt: "Поступление товаров и услуг",
  invoice_received: "Счёт-фактура полученный",
  sale: "Реализация товаров и услуг",
  payment: "Списание с расчётного счёта",
};
const round = (n: number) => Math.round(n * 100) / 100;
const addDays = (isoDate: string, days: number) =>
  new Date(Date.parse(`${isoDate}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

async function settings(sql: Tx): Promise<{ working: string; from: string }> {
  const rows = await sql<
    { key: string; value: string }[]
  >`select key, value from acc_settings where key in ('working_date', 'data_available_from')`;
  const m = new Map(rows.map((r) => [r.key, r.value]));
  return { working: m.get("working_date") ?? DEMO_WORKING_DATE, from: m.get("data_available_from") ?? DEMO_DATA_FROM };
}

async function counterpartyName(sql: Tx, id: string): Promise<string | null> {
  const [r] = await sql<{ name: string }[]>`select name from acc_counterparties where id = ${id}`;
  return r?.name ?? null;
}

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/ё/g, "е")
    .replace(/[«»"'“”]/g, " ")
    .replace(/(?<![а-я])(ооо|ао|пао|зао|ип)(?![а-я])/g, " ")
    .replace(/\s+/g, " ")
    .trim();

export async function resolveCounterparty(
  sql: Tx,
  a: ToolInput<"resolve_counterparty">,
): Promise<ToolOutput<"resolve_counterparty">> {
  const rows = await sql<
    { id: string; name: string; inn: string; roles: string[]; aliases: string[] }[]
  >`select id, name, inn, roles, aliases from acc_counterparties`;
  const q = norm(a.query);
  const words = q.split(" ").filter((w) => w.length >= 3);
  const scored = rows
    .map((r) => {
      const names = [norm(r.name), ...r.aliases.map(norm)];
      let score = 0;
      // A code (the directory's id) or an INN names one entry exactly.
      if (r.id === a.query.trim() || r.inn === a.query.trim() || names.includes(q)) score = 1;
      else if (names.some((n) => n.includes(q) || (q.includes(n) && n.length >= 4))) score = 0.8;
      else if (words.length) {
        const hit = words.filter((w) =>
          names.some((n) => n.split(/[\s-]+/).some((p) => p.startsWith(w.slice(0, Math.max(4, w.length - 2))))),
        ).length;
        score = round((0.6 * hit) / words.length);
      }
      return { counterparty_id: r.id, name: r.name, inn: r.inn, roles: r.roles, score };
    })
    .filter((c) => c.score >= 0.4)
    .sort((x, y) => y.score - x.score)
    .slice(0, 5);
  const inRole = a.role ? scored.filter((c) => c.roles.includes(a.role!)) : scored;
  if (inRole.length === 0) {
    const note = scored.length
      ? `Найдены контрагенты «${scored.map((c) => c.name).join("», «")}», но не в роли «${a.role === "supplier" ? "поставщик" : "покупатель"}».`
      : `Контрагент по запросу «${a.query}» не найден.`;
    return { status: "no_match", note, counterparty_id: null, candidates: scored };
  }
  const [top, second] = inRole;
  if (top!.score >= 0.8 && (!second || second.score < top!.score - 0.15)) {
    // A name that fits parties outside the role as well: bound by the role, with those named.
    const outside = scored
      .filter((c) => !inRole.includes(c) && c.score >= top!.score - 0.15)
      .map(({ counterparty_id, name, roles, score }) => ({ counterparty_id, name, roles, score }));
    return {
      status: "ok",
      note: `Привязан: ${top!.name}.`,
      counterparty_id: top!.counterparty_id,
      candidates: inRole,
      ...(outside.length ? { outside_role: outside } : {}),
    };
  }
  return {
    status: "ambiguous",
    note: `Подходят несколько контрагентов: ${inRole.map((c) => c.name).join(", ")}.`,
    counterparty_id: null,
    candidates: inRole,
  };
}

export async function resolvePeriodOrAsOf(
  sql: Tx,
  a: ToolInput<"resolve_period_or_asof">,
): Promise<ToolOutput<"resolve_period_or_asof">> {
  const s = await settings(sql);
  const common = { working_date: s.working, data_available_from: s.from };
  if (!a.text?.trim()) {
    return {
      status: "ok",
      note: `Дата не указана: использована рабочая дата базы ${s.working}.`,
      as_of_date: s.working,
      period_from: null,
      period_to: null,
      source: "working_date",
      ...common,
    };
  }
  const c = checkDatePhrase(a.text, s.working);
  const none = { as_of_date: null, period_from: null, period_to: null, source: "explicit" as const, ...common };
  if (c.kind === "impossible")
    return {
      status: "no_match",
      note: `Даты «${c.surface}» не существует в календаре.`,
      ...none,
      problem: "impossible_date",
    };
  if (c.kind === "future")
    return {
      status: "no_match",
      note: `Дата ${c.parsed.as_of_date} позже рабочей даты базы ${s.working}: учёт на неё ещё не ведётся.`,
      ...none,
      problem: "future_date",
    };
  if (c.kind === "none") return { status: "no_match", note: `В тексте «${a.text}» нет распознаваемой даты.`, ...none };
  const p = c.parsed;
  return {
    status: "ok",
    note: `«${a.text}» прочитано как ${p.reading}.`,
    as_of_date: p.as_of_date,
    period_from: p.period_from,
    period_to: p.period_to,
    source: "explicit",
    ...common,
    relative: !!p.relative,
  };
}

interface Move {
  counterparty_id: string;
  name: string;
  contract_id: string;
  number: string;
  terms: number;
  currency: string;
  period: string;
  amount: number;
}

/** FIFO: payments close the oldest receipts first; what is left of each receipt is due on its date + terms. */
function openPart(moves: Move[], asOf: string) {
  const queue: { due: string; left: number }[] = [];
  let advance = 0;
  for (const m of moves) {
    if (m.amount > 0) {
      let left = m.amount;
      const use = Math.min(advance, left);
      advance -= use;
      left -= use;
      if (left > 0) queue.push({ due: addDays(m.period, m.terms), left });
    } else {
      let pay = -m.amount;
      while (pay > 0 && queue.length) {
        const head = queue[0]!;
        const use = Math.min(head.left, pay);
        head.left -= use;
        pay -= use;
        if (head.left <= 0.005) queue.shift();
      }
      advance += pay;
    }
  }
  const overdue = queue.filter((q) => q.due < asOf).reduce((s, q) => s + q.left, 0);
  return { overdue: round(overdue), oldestDue: queue[0]?.due ?? null };
}

export async function getOpenSupplierSettlements(
  sql: Tx,
  a: ToolInput<"get_open_supplier_settlements">,
): Promise<ToolOutput<"get_open_supplier_settlements">> {
  if (a.counterparty_id && !(await counterpartyName(sql, a.counterparty_id))) {
    return {
      ...unbound("Контрагента", a.counterparty_id),
      as_of_date: a.as_of_date,
      movements_scanned: 0,
      rows: [],
    };
  }
  const moves = await sql<Move[]>`
    select s.counterparty_id, c.name, s.contract_id, k.number, k.payment_terms_days as terms, k.currency,
           to_char(s.period, 'YYYY-MM-DD') as period, s.amount::float8 as amount
    from acc_settlements s join acc_counterparties c on c.id = s.counterparty_id join acc_contracts k on k.id = s.contract_id
    where s.period <= ${a.as_of_date} and 'supplier' = any(c.roles)
      ${a.counterparty_id ? sql`and s.counterparty_id = ${a.counterparty_id}` : sql``}
    order by s.period, s.amount desc, s.id`;
  if (moves.length === 0) {
    const s = await settings(sql);
    return {
      status: "no_match",
      note: `До ${a.as_of_date} в регистре расчётов с поставщиками нет ни одного движения (данные ведутся с ${s.from}).`,
      as_of_date: a.as_of_date,
      movements_scanned: 0,
      rows: [],
    };
  }
  const byContract = new Map<string, Move[]>();
  for (const m of moves) byContract.set(m.contract_id, [...(byContract.get(m.contract_id) ?? []), m]);
  let rows = [...byContract.values()]
    .map((ms) => {
      const f = ms[0]!;
      const balance = round(ms.reduce((s, m) => s + m.amount, 0));
      const { overdue, oldestDue } = balance > 0 ? openPart(ms, a.as_of_date) : { overdue: 0, oldestDue: null };
      return {
        counterparty_id: f.counterparty_id,
        counterparty_name: f.name,
        contract_id: f.contract_id,
        contract_number: f.number,
        balance,
        currency: f.currency,
        overdue_amount: Math.min(overdue, Math.max(balance, 0)),
        oldest_due_date: oldestDue,
        last_movement_date: ms.at(-1)!.period,
        source_ref: `${REG}:${f.contract_id}@${a.as_of_date}`,
      };
    })
    .filter((r) => Math.abs(r.balance) > 0.005);
  if (a.overdue_only) rows = rows.filter((r) => r.overdue_amount > 0);
  rows.sort((x, y) => y.balance - x.balance);
  if (rows.length === 0) {
    return {
      status: "empty",
      note: `Движений до ${a.as_of_date}: ${moves.length}; ${a.overdue_only ? "просроченных остатков нет" : "все остатки нулевые"}.`,
      as_of_date: a.as_of_date,
      movements_scanned: moves.length,
      rows,
    };
  }
  return {
    status: "ok",
    note: `Ненулевых остатков: ${rows.length} (движений просмотрено: ${moves.length}).`,
    as_of_date: a.as_of_date,
    movements_scanned: moves.length,
    rows,
  };
}

export async function getUnclosedDocuments(
  sql: Tx,
  a: ToolInput<"get_unclosed_documents_for_counterparty">,
): Promise<ToolOutput<"get_unclosed_documents_for_counterparty">> {
  const base = { counterparty_id: a.counterparty_id, as_of_date: a.as_of_date };
  if (!(await counterpartyName(sql, a.counterparty_id)))
    return {
      ...unbound("Контрагента", a.counterparty_id),
      ...base,
      documents_scanned: 0,
      rows: [],
    };
  const docs = await sql<
    { id: string; kind: string; number: string; date: string; amount: number; posted: boolean; paid: number }[]
  >`
    select d.id, d.kind, d.number, to_char(d.doc_date, 'YYYY-MM-DD') as date, d.amount::float8 as amount, d.posted,
           coalesce((select sum(a.amount) from acc_payment_allocations a join acc_payments p on p.id = a.payment_id
                     where a.document_id = d.id and p.pay_date <= ${a.as_of_date}), 0)::float8 as paid
    from acc_documents d where d.counterparty_id = ${a.counterparty_id} and d.kind = 'receipt' and d.doc_date <= ${a.as_of_date}
    order by d.doc_date, d.id`;
  if (docs.length === 0)
    return {
      status: "no_match",
      note: `У контрагента нет документов поступления до ${a.as_of_date}.`,
      ...base,
      documents_scanned: 0,
      rows: [],
    };
  const rows = docs
    .filter((d) => d.amount - d.paid > 0.005)
    .map((d) => ({
      document_id: d.id,
      kind: KIND_RU[d.kind] ?? d.kind,
      number: d.number,
      date: d.date,
      amount: d.amount,
      paid: d.paid,
      unpaid: round(d.amount - d.paid),
      posted: d.posted,
      source_ref: docRef(d.kind, d.id),
    }));
  if (rows.length === 0)
    return {
      status: "empty",
      note: `Документов поступления: ${docs.length}; все закрыты распределёнными оплатами (учитываются и непроведённые оплаты).`,
      ...base,
      documents_scanned: docs.length,
      rows,
    };
  return {
    status: "ok",
    note: `Незакрытых документов: ${rows.length} из ${docs.length}.`,
    ...base,
    documents_scanned: docs.length,
    rows,
  };
}

/** The head of an answer about an object the base does not hold: the tool names it, nothing is bound. */
const unbound = (what: "Контрагента" | "Документа", id: string) => ({
  status: "unbound_entity" as const,
  note: `${what} ${id} нет в базе.`,
});

async function findObject(sql: Tx, id: string): Promise<{ kind: string; posted: boolean } | null> {
  const [d] = await sql<{ kind: string; posted: boolean }[]>`select kind, posted from acc_documents where id = ${id}`;
  if (d) return d;
  const [p] = await sql<{ posted: boolean }[]>`select posted from acc_payments where id = ${id}`;
  return p ? { kind: "payment", posted: p.posted } : null;
}

export async function getDocumentMovements(
  sql: Tx,
  a: ToolInput<"get_document_movements">,
): Promise<ToolOutput<"get_document_movements">> {
  const obj = await findObject(sql, a.document_id);
  if (!obj)
    return {
      ...unbound("Документа", a.document_id),
      document_id: a.document_id,
      posted: null,
      rows: [],
    };
  const rows = await sql<
    { period: string; counterparty_id: string; contract_id: string; amount: number; id: string }[]
  >`
    select id, to_char(period, 'YYYY-MM-DD') as period, counterparty_id, contract_id, amount::float8 as amount from acc_settlements where recorder_id = ${a.document_id} order by period, id`;
  const out = rows.map((r) => ({
    register: "Расчёты с поставщиками",
    period: r.period,
    counterparty_id: r.counterparty_id,
    contract_id: r.contract_id,
    amount: r.amount,
    source_ref: `${REG}:${r.id}`,
  }));
  if (out.length === 0) {
    return {
      status: "empty",
      note: obj.posted
        ? "Документ проведён, но движений по расчётам с поставщиками не делает."
        : "Документ не проведён: движений по регистру нет.",
      document_id: a.document_id,
      posted: obj.posted,
      rows: out,
    };
  }
  return { status: "ok", note: `Движений: ${out.length}.`, document_id: a.document_id, posted: obj.posted, rows: out };
}

export async function getPaymentChain(
  sql: Tx,
  a: ToolInput<"get_payment_chain">,
): Promise<ToolOutput<"get_payment_chain">> {
  if (!(await counterpartyName(sql, a.counterparty_id)))
    return {
      ...unbound("Контрагента", a.counterparty_id),
      counterparty_id: a.counterparty_id,
      rows: [],
    };
  const pays = await sql<
    {
      id: string;
      number: string;
      date: string;
      amount: number;
      posted: boolean;
      allocations: { document_id: string; document_number: string; amount: number }[];
    }[]
  >`
    select p.id, p.number, to_char(p.pay_date, 'YYYY-MM-DD') as date, p.amount::float8 as amount, p.posted,
           coalesce((select json_agg(json_build_object('document_id', a.document_id, 'document_number', d.number, 'amount', a.amount::float8) order by d.doc_date)
                     from acc_payment_allocations a join acc_documents d on d.id = a.document_id where a.payment_id = p.id), '[]'::json) as allocations
    from acc_payments p where p.counterparty_id = ${a.counterparty_id} and p.direction = 'outgoing'
      ${a.as_of_date ? sql`and p.pay_date <= ${a.as_of_date}` : sql``}
    order by p.pay_date, p.id limit 50`;
  const rows = pays.map((p) => ({
    payment_id: p.id,
    number: p.number,
    date: p.date,
    amount: p.amount,
    posted: p.posted,
    allocations: p.allocations,
    source_ref: docRef("payment", p.id),
  }));
  if (rows.length === 0)
    return {
      status: "empty",
      note: `Оплат контрагенту${a.as_of_date ? ` до ${a.as_of_date}` : ""} нет.`,
      counterparty_id: a.counterparty_id,
      rows,
    };
  return {
    status: "ok",
    note: `Оплат: ${rows.length}${rows.some((r) => !r.posted) ? ", среди них есть непроведённые" : ""}.`,
    counterparty_id: a.counterparty_id,
    rows,
  };
}

export async function getBalanceAsOf(
  sql: Tx,
  a: ToolInput<"get_balance_as_of">,
): Promise<ToolOutput<"get_balance_as_of">> {
  const name = await counterpartyName(sql, a.counterparty_id);
  const base = { counterparty_id: a.counterparty_id, counterparty_name: name, as_of_date: a.as_of_date };
  if (!name)
    return {
      ...unbound("Контрагента", a.counterparty_id),
      ...base,
      balance: null,
      movements_count: 0,
      by_contract: [],
      source_ref: null,
    };
  const rows = await sql<{ contract_id: string; number: string; balance: number; n: number }[]>`
    select s.contract_id, k.number, sum(s.amount)::float8 as balance, count(*)::int as n
    from acc_settlements s join acc_contracts k on k.id = s.contract_id
    where s.counterparty_id = ${a.counterparty_id} and s.period <= ${a.as_of_date}
    group by s.contract_id, k.number order by s.contract_id`;
  const n = rows.reduce((s, r) => s + r.n, 0);
  if (n === 0)
    return {
      status: "no_match",
      note: `До ${a.as_of_date} по контрагенту нет движений в регистре расчётов.`,
      ...base,
      balance: null,
      movements_count: 0,
      by_contract: [],
      source_ref: null,
    };
  const balance = round(rows.reduce((s, r) => s + r.balance, 0));
  return {
    status: "ok",
    note: `Сальдо ${balance} на ${a.as_of_date} (движений: ${n}).`,
    ...base,
    balance,
    movements_count: n,
    by_contract: rows.map((r) => ({
      contract_id: r.contract_id,
      contract_number: r.number,
      balance: round(r.balance),
    })),
    source_ref: `${REG}:${a.counterparty_id}@${a.as_of_date}`,
  };
}

export async function getRelatedClosingDocuments(
  sql: Tx,
  a: ToolInput<"get_related_closing_documents">,
): Promise<ToolOutput<"get_related_closing_documents">> {
  const obj = await findObject(sql, a.document_id);
  if (!obj)
    return {
      ...unbound("Документа", a.document_id),
      document_id: a.document_id,
      expected_kinds: [],
      missing_kinds: [],
      rows: [],
    };
  type Row = { id: string; kind: string; number: string; date: string; amount: number };
  let rows: Row[] = [];
  let expected: string[] = [];
  if (obj.kind === "receipt") {
    expected = ["invoice_received"];
    rows = await sql<Row[]>`
      select id, kind, number, to_char(doc_date, 'YYYY-MM-DD') as date, amount::float8 as amount from acc_documents where base_document_id = ${a.document_id}
      union all
      select p.id, 'payment', p.number, to_char(p.pay_date, 'YYYY-MM-DD'), a.amount::float8 from acc_payment_allocations a join acc_payments p on p.id = a.payment_id where a.document_id = ${a.document_id}
      order by 4, 1`;
  } else if (obj.kind === "payment") {
    expected = ["receipt"];
    rows = await sql<Row[]>`
      select d.id, d.kind, d.number, to_char(d.doc_date, 'YYYY-MM-DD') as date, a.amount::float8 as amount
      from acc_payment_allocations a join acc_documents d on d.id = a.document_id where a.payment_id = ${a.document_id} order by d.doc_date, d.id`;
  }
  const missing = expected.filter((k) => !rows.some((r) => r.kind === k));
  const out = rows.map((r) => ({
    document_id: r.id,
    kind: KIND_RU[r.kind] ?? r.kind,
    number: r.number,
    date: r.date,
    amount: r.amount,
    source_ref: docRef(r.kind, r.id),
  }));
  const missingRu = missing.map((k) => KIND_RU[k] ?? k);
  if (out.length === 0)
    return {
      status: "empty",
      note: expected.length
        ? `Закрывающих документов нет; ожидался: ${missingRu.join(", ")}.`
        : "Для документа этого вида закрывающие документы не предусмотрены.",
      document_id: a.document_id,
      expected_kinds: expected.map((k) => KIND_RU[k] ?? k),
      missing_kinds: missingRu,
      rows: out,
    };
  return {
    status: "ok",
    note: missing.length
      ? `Найдено связанных: ${out.length}; отсутствует: ${missingRu.join(", ")}.`
      : `Найдено связанных: ${out.length}.`,
    document_id: a.document_id,
    expected_kinds: expected.map((k) => KIND_RU[k] ?? k),
    missing_kinds: missingRu,
    rows: out,
  };
}
