// The corpus's Workbench scenarios: what a Configurator user asks of the corpus workspace and the
// bundled documentation. Each one reaches the answer model; its prompt is captured from the wire.
export interface Scenario {
  id: string;
  message: string;
}

export const SCENARIOS: Scenario[] = [
  { id: "form-shipment", message: "Покажи форму «Отгрузка»" },
  { id: "list-logistics", message: "Перечисли композиции в папке «Логистика»" },
  { id: "invoice-approval", message: "Покажи композицию «Согласование счёта»" },
  { id: "delivery-cost", message: "Покажи composition-delivery-cost" },
  { id: "vacation-days", message: "Покажи композицию «Расчёт отпускных дней»" },
  { id: "deliveries-report", message: "Покажи отчёт «Доставки за месяц»" },
  { id: "unpaid-report", message: "Покажи отчёт «Неоплаченные счета»" },
  { id: "employee-card", message: "Покажи форму «Карточка сотрудника»" },
  { id: "invoice-entity", message: "Покажи сущность «Счёт поставщика»" },
  { id: "list-finance-reports", message: "Перечисли отчёты в папке «Финансы»" },
  { id: "list-hr-forms", message: "Перечисли формы в папке «Кадры»" },
  { id: "doc-delete-composition", message: "Что будет с отчётом, если композицию удалят?" },
  { id: "doc-move-document", message: "Как перенести документ в другую папку?" },
  { id: "doc-clarification", message: "Как ответить на уточняющий вопрос ассистента?" },
  { id: "doc-date-functions", message: "Какие функции дат есть в выражениях?" },
  { id: "doc-report-period", message: "Как задаётся период отчёта?" },
  { id: "doc-composition-versions", message: "Что происходит с версиями композиции при публикации?" },
  // the held-out round (answers-heldout.ts)
  { id: "route-optimizer", message: "Покажи композицию «Оптимизация маршрута»" },
  { id: "carrier-entity", message: "Покажи сущность «Перевозчик»" },
  { id: "employee-entity", message: "Покажи сущность «Сотрудник»" },
  { id: "doc-form-layout", message: "Какие раскладки бывают у формы?" },
  { id: "doc-operators", message: "Какие операторы поддерживают выражения?" },
  { id: "doc-assistant", message: "Что умеет ассистент Конфигуратора?" },
  // unit-less content keys restated with the noun of their meaning (answers-keys.ts)
  { id: "period-close", message: "Покажи композицию «Закрытие периода»" },
];
