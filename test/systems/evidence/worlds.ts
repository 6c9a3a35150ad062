// Demo worlds for the answer contract's tests: the bundle, coverage and composed package of a run,
// built by the real evidence builder, rules critic and composer from tool outputs shaped like the
// demo MCP server's (a full run with an advance and an overdue balance, a document and payment
// chain, a run whose core tool failed, an empty overdue-only result).
import { composeAnswer, type ComposeInput } from "../../../systems/evidence/compose";
import { ruleCoverage } from "../../../systems/evidence/critic-rules";
import { buildEvidence } from "../../../systems/evidence/evidence-builder";
import type { CoverageReport, EvidenceBundle, FinalAnswerPackage } from "../../../systems/evidence/artifacts";
import { dateOut, plan, scope, settlementRow, partyRun, registerRun, toolRun } from "./fixtures";

export interface World {
  name: string;
  bundle: EvidenceBundle;
  coverage: CoverageReport;
  draft: FinalAnswerPackage;
  /** What the composer was given: the claims menu is built from it. */
  input: ComposeInput;
}

function world(
  name: string,
  runs: ReturnType<typeof toolRun>[],
  steps: [string, string | null, boolean][],
  s = scope(),
) {
  const P = plan(steps);
  const bundle = buildEvidence("r1", P, runs, []);
  const { coverage, clarifying_question } = ruleCoverage({
    requestId: "r1",
    frame: null,
    scope: s,
    plan: P,
    toolRuns: runs,
    bundle,
  });
  const input: ComposeInput = { scope: s, coverage, bundle, toolRuns: runs, clarifying_question, offline: false };
  return { name, bundle, coverage, draft: composeAnswer(input), input };
}

const SETTLEMENT_STEPS: [string, string | null, boolean][] = [
  ["S2", "resolve_period_or_asof", true],
  ["S4", "get_open_supplier_settlements", true],
];

export const PARTIES = [
  ["cp-alfa-snab", "ООО «Альфа-Снаб»"],
  ["cp-technopostavka", "АО «ТехноПоставка»"],
  ["cp-logistik", "ООО «Логистик Плюс»"],
  ["cp-smirnov", "ИП Смирнов Андрей Викторович"],
] as const;

export function settlementsWorld(): World {
  const rows = [
    { ...settlementRow(PARTIES[0][0], PARTIES[0][1], 120000), overdue_amount: 45000, oldest_due_date: "2026-02-15" },
    settlementRow(PARTIES[1][0], PARTIES[1][1], 150000),
    settlementRow(PARTIES[2][0], PARTIES[2][1], 95000),
    settlementRow(PARTIES[3][0], PARTIES[3][1], -30000),
  ];
  return world(
    "остатки с авансом",
    [toolRun("S2", "resolve_period_or_asof", "success", dateOut()), registerRun(rows, { movements: 9 })],
    SETTLEMENT_STEPS,
  );
}

export function chainWorld(): World {
  const cp = PARTIES[1][0];
  return world(
    "документы и оплаты",
    [
      partyRun(cp, PARTIES[1][1], "7701000002", "ТехноПоставка"),
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_unclosed_documents_for_counterparty", "success", {
        status: "ok",
        note: "",
        counterparty_id: cp,
        as_of_date: "2026-03-31",
        documents_scanned: 3,
        rows: [
          {
            document_id: "d-466",
            kind: "Поступление товаров",
            number: "466",
            date: "2026-03-25",
            amount: 150000,
            paid: 0,
            unpaid: 150000,
            posted: true,
            source_ref: "Документ.ПоступлениеТоваров:d-466",
          },
          {
            document_id: "d-470",
            kind: "Поступление услуг",
            number: "470",
            date: "2026-03-28",
            amount: 80000,
            paid: 60000,
            unpaid: 20000,
            posted: false,
            source_ref: "Документ.ПоступлениеУслуг:d-470",
          },
        ],
      }),
      toolRun("S5", "get_payment_chain", "success", {
        status: "ok",
        note: "",
        counterparty_id: cp,
        rows: [
          {
            payment_id: "p-17",
            number: "17",
            date: "2026-03-29",
            amount: 60000,
            posted: true,
            allocations: [{ document_id: "d-470", document_number: "470", amount: 60000 }],
            source_ref: "Документ.СписаниеСРасчетногоСчета:p-17",
          },
        ],
      }),
    ],
    [
      ["S1", "resolve_counterparty", true],
      ["S2", "resolve_period_or_asof", true],
      ["S4", "get_unclosed_documents_for_counterparty", true],
      ["S5", "get_payment_chain", true],
    ],
    scope({ intent: "payment_chain" }),
  );
}

export function toolingFailedWorld(): World {
  return world(
    "инструмент не ответил",
    [
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun("S4", "get_open_supplier_settlements", "timeout", null, {
        error_code: "MCP_TIMEOUT",
        error_message: "timeout",
      }),
    ],
    SETTLEMENT_STEPS,
  );
}

export function overdueEmptyWorld(): World {
  return world(
    "просроченных нет (фильтр)",
    [
      toolRun("S2", "resolve_period_or_asof", "success", dateOut()),
      toolRun(
        "S4",
        "get_open_supplier_settlements",
        "empty",
        {
          status: "empty",
          note: "в регистре нет ни одного движения",
          as_of_date: "2026-03-31",
          movements_scanned: 9,
          rows: [],
        },
        { input: { overdue_only: true } },
      ),
    ],
    SETTLEMENT_STEPS,
    scope({ reading: "overdue_settlements" }),
  );
}

export const WORLDS: World[] = [settlementsWorld(), chainWorld(), toolingFailedWorld(), overdueEmptyWorld()];
