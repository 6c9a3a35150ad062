// Demo accounting data for the evidence MCP server: a small 1C-like base written for this
// project. Working date 2026-04-10. It is built so the seed's question «По каким поставщикам
// висят хвосты?» has real answers and real problems:
//  - ООО «Альфа-Снаб»: 95 000 open, overdue (receipt № 137 unpaid);
//  - АО «ТехноПоставка»: 150 000 open, receipt № 55 has no invoice (missing supporting document);
//  - ООО «Вектор»: the register still shows 60 000, but payment № 466 covering it exists unposted
//    (conflicting evidence); Вектор is also a customer (two roles);
//  - ИП Смирнов: a 30 000 advance paid, goods not received (negative balance);
//  - ООО «Логистик Плюс»: everything settled; ООО «Ромашка», ООО «Альфа-Трейд»: customers only
//    («Альфа» alone is ambiguous between Альфа-Снаб and Альфа-Трейд).
import type { Tx } from "../../../storage/db";

export const DEMO_WORKING_DATE = "2026-04-10";
export const DEMO_DATA_FROM = "2025-10-01";

const counterparties = [
  ["cp-alfa-snab", "ООО «Альфа-Снаб»", "7701234567", ["supplier"], ["альфа-снаб", "альфа снаб", "альфаснаб"]],
  ["cp-technopostavka", "АО «ТехноПоставка»", "7702345678", ["supplier"], ["технопоставка", "техно поставка"]],
  ["cp-logistik", "ООО «Логистик Плюс»", "7703456789", ["supplier"], ["логистик плюс", "логистик"]],
  ["cp-smirnov", "ИП Смирнов Андрей Викторович", "770412345678", ["supplier"], ["смирнов", "ип смирнов"]],
  ["cp-vektor", "ООО «Вектор»", "7705678901", ["supplier", "customer"], ["вектор"]],
  ["cp-romashka", "ООО «Ромашка»", "7706789012", ["customer"], ["ромашка"]],
  ["cp-alfa-trade", "ООО «Альфа-Трейд»", "7707890123", ["customer"], ["альфа-трейд", "альфа трейд"]],
] as const;

const contracts = [
  ["ct-as-1", "cp-alfa-snab", "П-12/2025", "2025-12-01", "purchase", 14],
  ["ct-tp-1", "cp-technopostavka", "ТП-2026/03", "2026-01-15", "purchase", 30],
  ["ct-lg-1", "cp-logistik", "ЛП-7", "2025-10-01", "purchase", 10],
  ["ct-sm-1", "cp-smirnov", "15", "2026-03-01", "purchase", 7],
  ["ct-vk-1", "cp-vektor", "В-44", "2026-02-01", "purchase", 20],
  ["ct-vk-2", "cp-vektor", "В-45/П", "2026-02-01", "sale", 10],
  ["ct-rm-1", "cp-romashka", "Р-1", "2025-10-15", "sale", 10],
  ["ct-at-1", "cp-alfa-trade", "АТ-3", "2026-01-10", "sale", 15],
] as const;

// id, kind, number, date, counterparty, contract, amount, posted, base document
const documents = [
  ["doc-lg-3", "receipt", "3", "2025-11-05", "cp-logistik", "ct-lg-1", 30000, true, null],
  ["doc-lg-3-sf", "invoice_received", "СФ-3", "2025-11-05", "cp-logistik", "ct-lg-1", 30000, true, "doc-lg-3"],
  ["doc-lg-9", "receipt", "9", "2026-01-20", "cp-logistik", "ct-lg-1", 48000, true, null],
  ["doc-lg-9-sf", "invoice_received", "СФ-9", "2026-01-20", "cp-logistik", "ct-lg-1", 48000, true, "doc-lg-9"],
  ["doc-as-101", "receipt", "101", "2026-02-10", "cp-alfa-snab", "ct-as-1", 120000, true, null],
  ["doc-as-101-sf", "invoice_received", "СФ-101", "2026-02-10", "cp-alfa-snab", "ct-as-1", 120000, true, "doc-as-101"],
  ["doc-tp-55", "receipt", "55", "2026-03-01", "cp-technopostavka", "ct-tp-1", 250000, true, null],
  ["doc-vk-310", "receipt", "310", "2026-03-05", "cp-vektor", "ct-vk-1", 60000, true, null],
  ["doc-vk-310-sf", "invoice_received", "СФ-310", "2026-03-05", "cp-vektor", "ct-vk-1", 60000, true, "doc-vk-310"],
  ["doc-as-137", "receipt", "137", "2026-03-15", "cp-alfa-snab", "ct-as-1", 95000, true, null],
  ["doc-as-137-sf", "invoice_received", "СФ-137", "2026-03-15", "cp-alfa-snab", "ct-as-1", 95000, true, "doc-as-137"],
  ["doc-rm-5", "sale", "5", "2026-02-02", "cp-romashka", "ct-rm-1", 40000, true, null],
  ["doc-vk-s12", "sale", "12", "2026-03-12", "cp-vektor", "ct-vk-2", 18000, true, null],
] as const;

// id, number, date, counterparty, contract, amount, direction, posted, allocations
const payments = [
  ["pay-lg-301", "301", "2025-11-10", "cp-logistik", "ct-lg-1", 30000, "outgoing", true, [["doc-lg-3", 30000]]],
  ["pay-lg-390", "390", "2026-01-25", "cp-logistik", "ct-lg-1", 48000, "outgoing", true, [["doc-lg-9", 48000]]],
  ["pay-as-418", "418", "2026-02-20", "cp-alfa-snab", "ct-as-1", 120000, "outgoing", true, [["doc-as-101", 120000]]],
  [
    "pay-tp-455",
    "455",
    "2026-03-10",
    "cp-technopostavka",
    "ct-tp-1",
    100000,
    "outgoing",
    true,
    [["doc-tp-55", 100000]],
  ],
  ["pay-sm-470", "470", "2026-03-20", "cp-smirnov", "ct-sm-1", 30000, "outgoing", true, []],
  // Entered from the bank statement but never posted: the register still shows the debt.
  ["pay-vk-466", "466", "2026-03-25", "cp-vektor", "ct-vk-1", 60000, "outgoing", false, [["doc-vk-310", 60000]]],
] as const;

export async function seedDemoData(sql: Tx): Promise<void> {
  const [done] = await sql<{ value: string }[]>`select value from acc_settings where key = 'demo_seeded'`;
  if (done) return;
  await sql`insert into acc_settings ${sql([
    { key: "working_date", value: DEMO_WORKING_DATE },
    { key: "data_available_from", value: DEMO_DATA_FROM },
  ])} on conflict (key) do nothing`;
  await sql`insert into acc_counterparties ${sql(counterparties.map(([id, name, inn, roles, aliases]) => ({ id, name, inn, roles: [...roles], aliases: [...aliases] })))} on conflict (id) do nothing`;
  await sql`insert into acc_contracts ${sql(contracts.map(([id, counterparty_id, number, signed_on, kind, payment_terms_days]) => ({ id, counterparty_id, number, signed_on, kind, payment_terms_days })))} on conflict (id) do nothing`;
  // Receipts before invoices: an invoice references its receipt.
  for (const [
    id,
    kind,
    number,
    doc_date,
    counterparty_id,
    contract_id,
    amount,
    posted,
    base_document_id,
  ] of documents) {
    await sql`insert into acc_documents (id, kind, number, doc_date, counterparty_id, contract_id, amount, posted, base_document_id)
              values (${id}, ${kind}, ${number}, ${doc_date}, ${counterparty_id}, ${contract_id}, ${amount}, ${posted}, ${base_document_id}) on conflict (id) do nothing`;
  }
  for (const [id, number, pay_date, counterparty_id, contract_id, amount, direction, posted, allocations] of payments) {
    await sql`insert into acc_payments (id, number, pay_date, counterparty_id, contract_id, amount, direction, posted)
              values (${id}, ${number}, ${pay_date}, ${counterparty_id}, ${contract_id}, ${amount}, ${direction}, ${posted}) on conflict (id) do nothing`;
    for (const [document_id, a] of allocations) {
      await sql`insert into acc_payment_allocations (payment_id, document_id, amount) values (${id}, ${document_id}, ${a}) on conflict do nothing`;
    }
  }
  // The register is what posting writes: posted receipts (+) and posted outgoing payments (−).
  const moves = [
    ...documents
      .filter((d) => d[1] === "receipt" && d[7])
      .map((d) => ({
        id: `mv-${d[0]}`,
        period: d[3],
        counterparty_id: d[4],
        contract_id: d[5],
        recorder_kind: "document",
        recorder_id: d[0],
        amount: d[6],
      })),
    ...payments
      .filter((p) => p[6] === "outgoing" && p[7])
      .map((p) => ({
        id: `mv-${p[0]}`,
        period: p[2],
        counterparty_id: p[3],
        contract_id: p[4],
        recorder_kind: "payment",
        recorder_id: p[0],
        amount: -p[5],
      })),
  ];
  await sql`insert into acc_settlements ${sql(moves)} on conflict (id) do nothing`;
  await sql`insert into acc_settings (key, value) values ('demo_seeded', ${new Date().toISOString()}) on conflict (key) do nothing`;
}
