import type { Plan, WorkspaceSnapshot } from "../../../systems/workbench/types";
import { snapshotSha256 } from "../../../systems/workbench/canonical";

const d = (
  documentType: string,
  identity: string,
  displayName: string,
  folderIdentity: string | null,
  content: Record<string, unknown> = {},
) => ({ documentType, identity, displayName, folderIdentity, content });

/** A small workspace with the hard cases: same names, close names, nested folders, an unsupported type. */
export const workspace: WorkspaceSnapshot = {
  generation: "7",
  documents: [
    d("Folder", "folder-sales", "Продажи", null),
    d("Folder", "folder-sales-reports", "Отчёты продаж", "folder-sales"),
    d("Folder", "folder-archive", "Архив", null),
    d("Folder", "folder-warehouse", "Склад", null),
    d("Composition", "composition-discount", "Расчёт скидки", "folder-sales", {
      description: "Скидка клиента по сумме заказа",
    }),
    d("Composition", "composition-discount-v1", "Расчёт скидки", "folder-archive", {
      description: "Старая версия расчёта скидки",
    }),
    d("Composition", "composition-discounts", "Расчёт скидок", "folder-sales"),
    d("Composition", "composition-stock", "Учёт остатков", "folder-warehouse", {
      description: "Пересчёт остатков по складам",
    }),
    d("Composition", "composition-approval", "Согласование заказа", "folder-sales", {
      description: "Маршрут согласования заказа",
    }),
    d("Composition", "composition-alpha", "Объект Альфа", "folder-sales"),
    d("Composition", "composition-alpha-2", "Объект Альфа 2", "folder-sales"),
    d("Composition", "composition-nested", "Итоги квартала", "folder-sales-reports"),
    d("Composition", "composition-kalina", "Калина", "folder-warehouse"),
    d("Composition", "composition-malina", "Малина", "folder-warehouse"),
    d("Entity", "entity-order", "Заказ клиента", "folder-sales", { fields: ["number", "total"] }),
    d("Form", "form-order", "Заказ клиента", "folder-sales", { entity: "entity-order" }),
    d("Entity", "entity-contract", "Договор", null),
    d("Report", "report-quarter", "Продажи за квартал", "folder-sales-reports", {
      description: "Использует композицию Расчёт скидки",
    }),
    d("Process", "process-close", "Закрытие месяца", null),
  ],
};

export const sha = snapshotSha256(workspace);

/** The stage ids "00" up to `last`, in the order a run records them (doc/workbench.md). */
export const stageIds = (last: number): string[] =>
  Array.from({ length: last + 1 }, (_, i) => String(i).padStart(2, "0"));

/** Nine quoted targets, one more than a plan's task cap (8): the ninth on is named as left out. */
export const pastTaskCap = [
  "Учёт остатков",
  "Калина",
  "Малина",
  "Договор",
  "Объект Альфа",
  "Итоги квартала",
  "Согласование заказа",
  "Расчёт скидок",
  "Продажи за квартал",
];

/** The domain task many workbench cases plan: «Расчёт скидки» as a Composition; `over` sets what a case varies. */
export const discountTask = (over: Partial<Plan["tasks"][number]> = {}): Plan["tasks"][number] => ({
  id: "task-1",
  intent: "inspect_entity",
  sourceMode: "domain",
  entityType: "Composition",
  mentions: ["Расчёт скидки"],
  dependsOn: [],
  ...over,
});
