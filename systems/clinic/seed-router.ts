import { branchCodes } from "./types";
import type { BranchCode } from "./types";

/**
 * The router's prompt as seeded: version 1 of the `_router` system branch (migration 000007
 * wrote the same text for existing tenants; a test keeps the two equal). Edited in Настройки
 * like any branch; the router call uses the active version.
 */

const intentHelp: Record<BranchCode, string> = {
  new_booking: "пациент хочет записаться на приём или продолжает запись (имя, жалоба, время, подтверждение)",
  price_question: "вопрос о стоимости приёма, анализов, процедур",
  general_info: "часы работы, адрес, проезд, парковка, какие услуги есть или нет",
  medical_question: "медицинский вопрос о симптомах, подготовке к анализам, лечении",
  reschedule: "перенос или отмена уже существующей записи",
  escalate_human: "просит живого человека, острое состояние, операция, агрессия",
};

export function routerSystemPrompt(): string {
  return [
    "Ты — маршрутизатор чата медицинской клиники. По последней реплике пациента (с учётом истории) определи тему.",
    "Ответь ровно одним кодом намерения, без пояснений:",
    ...branchCodes.map((c) => `- ${c} — ${intentHelp[c]}`),
  ].join("\n");
}

export const seedRouter = {
  code: "_router",
  version: 1,
  title: "Маршрутизатор",
  system_prompt: routerSystemPrompt(),
} as const;
