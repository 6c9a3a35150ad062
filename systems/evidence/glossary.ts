// Domain knowledge the deterministic layers share: readings of informal terms, and per intent
// the normalized wording, the answer shape and what must be proven (success criteria).
import type { Intent, TermReading } from "./artifacts";

export const READINGS: Record<TermReading, { ru: string; short: string }> = {
  open_settlement_balance: {
    ru: "любые незакрытые (ненулевые) остатки взаиморасчётов с поставщиками",
    short: "незакрытые остатки по расчётам",
  },
  overdue_settlements: {
    ru: "только просроченные остатки (срок оплаты по договору истёк)",
    short: "просроченные расчёты",
  },
  unclosed_documents: { ru: "документы поступления, не закрытые оплатами", short: "незакрытые документы" },
};

/** When the user says «хвосты» and nothing else, this reading is applied — always as a marked assumption. */
export const DEFAULT_READING: TermReading = "open_settlement_balance";

/** Informal words that need a domain reading (§6.2 Domain Resolver). */
export const INFORMAL_TERM = /хвост|висят|висит|висящ/;

export function detectReading(text: string): TermReading | null {
  const t = text.toLowerCase().replace(/ё/g, "е");
  if (/просроч/.test(t)) return "overdue_settlements";
  if (/незакрыт\S*\s+документ|документ\S*\s+(?:не\s+)?(?:закрыт|оплач)|без закрывающ|неоплаченн\S*\s+документ/.test(t))
    return "unclosed_documents";
  if (/незакрыт\S*\s+остат|любые\s+(?:незакрытые\s+)?остат|остатк|задолженност|сальдо|(?<![а-яёa-z])долг/.test(t))
    return "open_settlement_balance";
  return null;
}

export interface IntentInfo {
  normalized: (subject: string) => string;
  shape: "list_with_explanation" | "single_value" | "document_list" | "explanation";
  criteria: string[];
  domain: string;
}

export const INTENT_INFO: Record<Exclude<Intent, "unsupported">, IntentInfo> = {
  detect_open_supplier_settlements: {
    normalized: () =>
      "Определить список поставщиков с незавершёнными расчётами (незакрытыми остатками) на дату отсечения и объяснить каждый случай.",
    shape: "list_with_explanation",
    criteria: [
      "Определить трактовку термина «хвосты»",
      "Определить дату отсечения",
      "Найти подтверждаемые остатки или незакрытые документы",
      "Сформировать список контрагентов с обоснованием",
    ],
    domain: "supplier_settlements",
  },
  counterparty_balance: {
    normalized: (s) =>
      `Определить сальдо взаиморасчётов с контрагентом ${s} на дату отсечения и подтвердить его документами.`,
    shape: "single_value",
    criteria: [
      "Привязать контрагента",
      "Определить дату отсечения",
      "Получить сальдо по регистру расчётов",
      "Сверить сальдо с документами и оплатами",
    ],
    domain: "supplier_settlements",
  },
  unclosed_documents: {
    normalized: (s) => `Найти документы поступления от контрагента ${s}, не закрытые оплатами на дату отсечения.`,
    shape: "document_list",
    criteria: [
      "Привязать контрагента",
      "Определить дату отсечения",
      "Найти незакрытые документы",
      "Проверить подтверждающие документы",
    ],
    domain: "document_closure",
  },
  payment_chain: {
    normalized: (s) => `Показать оплаты контрагенту ${s} и их распределение по документам.`,
    shape: "list_with_explanation",
    criteria: ["Привязать контрагента", "Определить дату отсечения", "Найти оплаты и их распределение"],
    domain: "payments",
  },
};
