// The Evidence scenarios of the answer corpus (seed 002 over the demo base): each is one
// conversation whose last turn's answer prompt is captured from the wire and stored in
// test/fixtures/evidence-replies/<name>.prompt.json; the replies in <name>.replies.ts were written
// by hand after reading that prompt. Earlier turns of a follow-up run with the engine's own answer.
import type { Faults } from "../../../systems/evidence/mcp-server/server";

export interface CorpusScenario {
  name: string;
  /** The user's messages, in order; the last one's answer prompt is the captured one. */
  turns: string[];
  /** Scripted interpreter/planner/critic replies for the last turn (role `planner`); empty: the rules read it. */
  planner?: string[];
  /** Faults of the demo MCP server for the whole conversation. */
  faults?: Faults;
  /** The executor's per-call timeout with those faults. */
  timeoutMs?: number;
}

export const CORPUS_SCENARIOS: CorpusScenario[] = [
  { name: "seed-question", turns: ["По каким поставщикам висят хвосты?"] },
  { name: "any-open-one-party", turns: ["Любые незакрытые остатки по поставщикам на 15.02.2026"] },
  { name: "total", turns: ["Сколько всего мы должны поставщикам на 31.03.2026?"] },
  {
    name: "due-date",
    turns: ["До какого числа надо было оплатить просроченные долги поставщикам на 10.04.2026?"],
  },
  { name: "overdue", turns: ["Какая просроченная задолженность перед поставщиками на 10.04.2026?"] },
  // one party's due date on the balance route: the plan reads its payment terms (issue 42's gap)
  { name: "due-date-party", turns: ["До какого числа нужно оплатить ООО «Альфа-Снаб»?"] },
  { name: "balance-alfa-snab", turns: ["Сколько мы должны ООО «Альфа-Снаб» на 31.03.2026?"] },
  { name: "balance-vektor-unposted", turns: ["Какое сальдо по ООО «Вектор» на 10.04.2026?"] },
  { name: "advance-smirnov", turns: ["Какое сальдо по ИП Смирнов на 31.03.2026?"] },
  {
    name: "documents-technopostavka",
    turns: ["Какие документы поступления не закрыты по АО «ТехноПоставка» на 10.04.2026?"],
  },
  { name: "payments-vektor", turns: ["Какие оплаты были ООО «Вектор» до 10.04.2026?"] },
  {
    name: "tool-timeout",
    turns: ["По каким поставщикам висят хвосты на 31.03.2026?"],
    faults: { get_open_supplier_settlements: { delayMs: 2_000 } },
    timeoutMs: 300,
  },
  {
    name: "two-tool-faults",
    turns: ["Незакрытые остатки по поставщикам на 31.03.2026"],
    faults: {
      get_payment_chain: { error: "connection reset" },
      get_unclosed_documents_for_counterparty: { error: "boom" },
    },
  },
  {
    name: "follow-up-date",
    turns: ["Сальдо по Альфа-Снабу на 31.03.2026?", "а на 10.04.2026?"],
  },
  {
    name: "follow-up-party",
    turns: ["Сальдо по ООО «Альфа-Снаб» на 10.04.2026?", "а по Вектору?"],
  },
  { name: "two-alfa", turns: ["Сколько мы должны Альфе на 31.03.2026?"] },
  { name: "impossible-date", turns: ["Незакрытые остатки по поставщикам на 31.02.2026"] },
  { name: "no-data-before", turns: ["Незакрытые остатки по поставщикам на 01.09.2025"] },
];
