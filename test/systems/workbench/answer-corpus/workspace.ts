// The corpus's workspace: the sample workspace (systems/workbench/samples/workspace.json) whose
// documents carry what real workspaces do and the held-out sets probed — durations, dates, a worked
// example, related documents named inside content.
import { readFileSync } from "node:fs";
import type { WorkspaceSnapshot } from "../../../../systems/workbench/types";

const sample = JSON.parse(
  readFileSync(new URL("../../../../systems/workbench/samples/workspace.json", import.meta.url), "utf8"),
) as WorkspaceSnapshot;

const richer: Record<string, Record<string, unknown>> = {
  "composition-invoice-approval": {
    description:
      "Маршрут согласования входящего счёта: бухгалтер, затем финансовый директор. Срок согласования — 14 дней с даты поступления счёта.",
    steps: ["accountantReview", "cfoApproval"],
    approvalDays: 14,
    publishedAt: "2025-03-14",
    relatedReport: "report-unpaid-invoices",
  },
  "composition-delivery-cost": {
    description:
      "Считает стоимость доставки по весу груза, расстоянию и тарифу перевозчика. Пример: груз 120 кг по тарифу 15 руб. за кг — 120 × 15 = 1 800 руб.",
    inputs: ["weightKg", "distanceKm", "carrierTariff"],
    maxWeightKg: 500,
    usedBy: "report-deliveries-month",
  },
  "composition-vacation-days": {
    description:
      "Остаток дней отпуска сотрудника на дату. Ежегодный отпуск — 28 календарных дней; неиспользованный остаток переносится на следующий год, но не более 14 дней.",
    inputs: ["employee", "date"],
    employeeEntity: "entity-employee",
  },
  "report-deliveries-month": {
    description:
      "Количество и стоимость доставок за месяц, использует композицию Стоимость доставки. Данные обновляются каждые 24 часа.",
    composition: "composition-delivery-cost",
    refreshHours: 24,
  },
  "report-unpaid-invoices": {
    description:
      "Счета поставщиков с истекшим сроком оплаты. Счёт считается просроченным через 30 дней после даты счёта.",
    entity: "entity-invoice",
    overdueAfterDays: 30,
  },
  "form-employee-card": {
    entity: "entity-employee",
    layout: "twoColumns",
    description: "Карточка для отдела кадров. Испытательный срок нового сотрудника — 3 месяца.",
    probationMonths: 3,
  },
  // the held-out round (answers-heldout.ts): a worked example in minutes and kilometres, an entity
  // with dates and durations, an entity that names the documents using it
  "composition-route-optimizer": {
    description:
      "Выбирает порядок точек доставки с минимальным пробегом. Пример: 4 точки, между соседними по 25 км — 3 × 25 = 75 км пробега. Расчёт маршрута занимает до 120 секунд.",
    inputs: ["points", "vehicle"],
    maxPoints: 40,
    carrierEntity: "entity-carrier",
  },
  "entity-carrier": {
    fields: ["name", "inn", "tariff", "contractUntil"],
    description:
      "Перевозчик доставки. Тариф пересматривается раз в 90 дней; договор действует до 2026-06-30. Заявка перевозчику подаётся не позднее чем за 48 часов до отгрузки.",
    usedBy: "composition-delivery-cost",
  },
  "entity-employee": {
    fields: ["fullName", "position", "hiredAt", "department"],
    description: "Сотрудник компании. Право на первый отпуск появляется после 6 месяцев работы.",
    usedBy: ["form-employee-card", "composition-vacation-days"],
  },
  // issue 42's gap of unit-less content keys (answers-keys.ts): `retries` and `maxParallelTasks` name
  // what they count in English only; the description never says «попытка» or «задача»
  "composition-period-close": {
    description:
      "Закрытие периода: сверка остатков с контрагентами, затем формирование отчётности. Шаг, завершившийся ошибкой, запускается повторно.",
    steps: ["reconcileBalances", "buildReports"],
    retries: 3,
    maxParallelTasks: 2,
    reminderDays: 5,
  },
};

/** Documents the sample workspace lacks: a composition in the archive folder, whose keys carry no unit. */
const added: WorkspaceSnapshot["documents"] = [
  {
    documentType: "Composition",
    identity: "composition-period-close",
    displayName: "Закрытие периода",
    folderIdentity: "folder-archive",
    content: {},
  } as WorkspaceSnapshot["documents"][number],
];

export const corpusWorkspace: WorkspaceSnapshot = {
  generation: "42-corpus",
  documents: [...sample.documents, ...added].map((d) =>
    richer[d.identity] ? { ...d, content: richer[d.identity]! } : d,
  ),
};
