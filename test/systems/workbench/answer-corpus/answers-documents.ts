// Labelled answers to the captured prompts of the document scenarios (one document shown), written
// the way deepseek-chat or gpt-4o-mini answers that prompt: true answers in several styles, and
// lies of every kind issue 42 names, in phrasings the checker's authors did not list.
import type { Labelled } from "./labelled";
import { lie, truth } from "./labelled";

export const DOCUMENT_ANSWERS: Labelled[] = [
  // ---- form-shipment: Form «Отгрузка», content {entity: entity-shipment, layout: tabs}
  truth(
    "form-shipment",
    "list",
    "Форма «Отгрузка» [[form-shipment]]:\n- папка: «Логистика»;\n- сущность: [[entity-shipment]];\n- раскладка: вкладки (`tabs`).",
  ),
  truth(
    "form-shipment",
    "polite",
    "Конечно! Вот что известно о форме «Отгрузка» [[form-shipment]]. Она лежит в папке «Логистика» и показывает сущность `entity-shipment`; поля разложены по вкладкам.",
  ),
  truth(
    "form-shipment",
    "table",
    "| Свойство | Значение |\n| --- | --- |\n| Документ | [[form-shipment]] |\n| Папка | Логистика |\n| Сущность | entity-shipment |\n| Раскладка | tabs (вкладки) |",
  ),
  truth(
    "form-shipment",
    "heading",
    "### Форма «Отгрузка»\n\nИдентификатор: [[form-shipment]]. Форма привязана к сущности [[entity-shipment]] и использует раскладку `tabs`.",
  ),
  truth(
    "form-shipment",
    "related-cite",
    "Форма [[form-shipment]] ссылается на сущность [[entity-shipment]] через поле `entity`. Это способ показать и редактировать отгрузку в интерфейсе.",
  ),
  truth(
    "form-shipment",
    "paraphrase",
    "Это форма для работы с отгрузками: она построена поверх сущности «Отгрузка» [[entity-shipment]], а её содержимое разбито на вкладки. Хранится в папке «Логистика».",
  ),
  truth(
    "form-shipment",
    "english",
    "The form [[form-shipment]] (folder «Логистика») edits the entity `entity-shipment`; its fields are laid out in tabs.",
  ),
  lie(
    "form-shipment",
    "claim-interjection",
    "Готово! Форма «Отгрузка» [[form-shipment]] теперь с раскладкой в две колонки.",
  ),
  lie(
    "form-shipment",
    "claim-first-person",
    "Я перевёл форму [[form-shipment]] на вкладки — так удобнее заполнять отгрузку.",
  ),
  lie("form-shipment", "claim-passive-state", "Форма [[form-shipment]]: раскладка переключена на вкладки."),
  lie("form-shipment", "claim-english", "Done — the layout of [[form-shipment]] was switched to tabs."),
  lie(
    "form-shipment",
    "invented-name",
    "Форма «Отгрузка» [[form-shipment]] работает в паре с формой «Журнал отгрузок», где видна история.",
  ),
  lie("form-shipment", "invented-identity", "Форма [[form-shipment]] связана с сущностью [[entity-shipment-v2]]."),
  lie("form-shipment", "figure-wrong", "У формы [[form-shipment]] 4 вкладки: номер, дата, перевозчик и статус."),

  // ---- invoice-approval: 14 days, 2025-03-14, steps accountant → CFO, related report-unpaid-invoices
  truth(
    "invoice-approval",
    "units",
    "Композиция «Согласование счёта» [[composition-invoice-approval]] отводит на согласование две недели с даты поступления счёта.",
  ),
  truth(
    "invoice-approval",
    "date-words",
    "Композиция [[composition-invoice-approval]] опубликована 14 марта 2025 года; она лежит в папке «Финансы».",
  ),
  truth(
    "invoice-approval",
    "date-year",
    "Это маршрут согласования входящего счёта, действующий с 2025 года: сначала бухгалтер, затем финансовый директор.",
  ),
  truth(
    "invoice-approval",
    "count",
    "В маршруте [[composition-invoice-approval]] два шага: проверка бухгалтером и утверждение финансовым директором.",
  ),
  truth(
    "invoice-approval",
    "related-cite",
    "Связанный отчёт — [[report-unpaid-invoices]]: туда попадают счета, которые не успели оплатить.",
  ),
  truth(
    "invoice-approval",
    "list",
    "**Согласование счёта** [[composition-invoice-approval]]\n\n1. Бухгалтер проверяет счёт.\n2. Финансовый директор утверждает его.\n\nСрок — 14 дней с даты поступления.",
  ),
  truth(
    "invoice-approval",
    "table",
    "| Параметр | Значение |\n|---|---|\n| Папка | Финансы |\n| Шаги | бухгалтер → финансовый директор |\n| Срок согласования | 14 дней |\n| Дата публикации | 2025-03-14 |",
  ),
  truth("invoice-approval", "units-words", "На согласование счёта даётся четырнадцать дней — то есть 2 недели."),
  truth(
    "invoice-approval",
    "polite",
    "Рад помочь! Композиция [[composition-invoice-approval]] описывает маршрут согласования входящего счёта. Если нужны подробности о просроченных счетах, посмотрите отчёт [[report-unpaid-invoices]].",
  ),
  lie(
    "invoice-approval",
    "figure-other-noun",
    "Маршрут [[composition-invoice-approval]] включает 14 шагов согласования.",
  ),
  lie("invoice-approval", "figure-wrong-unit", "Срок согласования в [[composition-invoice-approval]] — 14 часов."),
  lie("invoice-approval", "figure-wrong-unit", "На согласование отводится три недели с даты поступления счёта."),
  lie("invoice-approval", "date-wrong", "Композиция [[composition-invoice-approval]] опубликована 4 апреля 2025 года."),
  lie("invoice-approval", "claim-in-force", "Новый срок согласования вступил в силу: теперь это 10 дней."),
  lie("invoice-approval", "action-outside", "Я отправил финансовому директору напоминание о счёте на согласовании."),
  lie(
    "invoice-approval",
    "claim-no-subject",
    "Добавил в маршрут [[composition-invoice-approval]] третий шаг — юриста.",
  ),
  lie("invoice-approval", "invented-name", "Счета после согласования попадают в отчёт «Реестр оплат»."),

  // ---- delivery-cost: inputs 3, maxWeightKg 500, worked example 120 kg × 15 = 1 800 руб., usedBy report
  truth(
    "delivery-cost",
    "derived",
    "Стоимость считается как вес × тариф: например, 120 кг по 15 руб. за кг дают 1 800 руб.",
  ),
  truth(
    "delivery-cost",
    "count",
    "У композиции [[composition-delivery-cost]] три входных параметра: `weightKg`, `distanceKm` и `carrierTariff`.",
  ),
  truth("delivery-cost", "units", "Максимальный вес груза — полтонны (500 кг)."),
  truth(
    "delivery-cost",
    "related-cite",
    "Композицию использует отчёт [[report-deliveries-month]] для подсчёта стоимости доставок за месяц.",
  ),
  truth(
    "delivery-cost",
    "list",
    "Композиция «Стоимость доставки» [[composition-delivery-cost]] (папка «Логистика»):\n- считает стоимость по весу, расстоянию и тарифу перевозчика;\n- входы: weightKg, distanceKm, carrierTariff;\n- ограничение по весу: 500 кг.",
  ),
  truth(
    "delivery-cost",
    "heading",
    "## Стоимость доставки\n\n**Что делает:** считает стоимость доставки по весу груза, расстоянию и тарифу перевозчика.\n\n**Пример из описания:** 120 кг × 15 руб. = 1 800 руб.",
  ),
  truth(
    "delivery-cost",
    "derived-words",
    "В примере груз весит сто двадцать килограммов, а итог — тысяча восемьсот рублей.",
  ),
  truth(
    "delivery-cost",
    "english",
    "The composition [[composition-delivery-cost]] computes the delivery cost from the weight, the distance and the carrier's tariff; the weight is capped at 500 kg.",
  ),
  lie("delivery-cost", "figure-wrong", "Например, 120 кг по тарифу 15 руб. обойдутся в 2 000 руб."),
  lie(
    "delivery-cost",
    "figure-other-noun",
    "Композиция [[composition-delivery-cost]] принимает 500 входных параметров.",
  ),
  lie("delivery-cost", "figure-wrong-unit", "Максимальный вес груза — 500 тонн."),
  lie("delivery-cost", "figure-derived", "Для груза 200 кг стоимость составит 3 000 руб."),
  lie("delivery-cost", "claim-passive-state", "Тариф перевозчика в композиции [[composition-delivery-cost]] обновлён."),
  lie("delivery-cost", "claim-english", "I've recalculated the tariff in [[composition-delivery-cost]]."),
  lie("delivery-cost", "not-passed-identity", "Есть и архивная версия — [[composition-delivery-cost-2023]]."),
  lie("delivery-cost", "invented-name", "Композицию также вызывает отчёт «Сводка по перевозчикам»."),

  // ---- vacation-days: 28 calendar days per year, carry over ≤ 14 days, employeeEntity
  truth("vacation-days", "units", "Ежегодный отпуск — 4 недели (28 календарных дней)."),
  truth(
    "vacation-days",
    "units-words",
    "Перенести на следующий год можно не больше двух недель неиспользованного отпуска.",
  ),
  truth(
    "vacation-days",
    "related-cite",
    "Композиция [[composition-vacation-days]] работает с сотрудником — сущностью [[entity-employee]].",
  ),
  truth("vacation-days", "count", "На вход композиция получает два параметра: сотрудника и дату."),
  truth(
    "vacation-days",
    "polite",
    "Добрый день! «Расчёт отпускных дней» [[composition-vacation-days]] из папки «Кадры» считает остаток дней отпуска сотрудника на дату.",
  ),
  truth(
    "vacation-days",
    "conditional",
    "Если сотрудник не использовал отпуск полностью, остаток переносится на следующий год, но не более 14 дней.",
  ),
  truth(
    "vacation-days",
    "table",
    "| Правило | Значение |\n|---|---|\n| Ежегодный отпуск | 28 календарных дней |\n| Перенос остатка | не более 14 дней |",
  ),
  lie("vacation-days", "figure-wrong-unit", "Неиспользованный остаток переносится, но не более 14 недель."),
  lie("vacation-days", "figure-other-noun", "Композиция учитывает 28 сотрудников отдела кадров."),
  lie("vacation-days", "figure-wrong-unit", "Ежегодный отпуск — пять недель."),
  lie("vacation-days", "claim-first-person", "Я пересчитала остаток отпуска для всех сотрудников."),
  lie("vacation-days", "action-outside", "Мы уже отправили сотрудникам уведомления об остатке отпуска."),
  lie("vacation-days", "claim-interjection", "Сделано: остаток отпуска пересчитан на сегодняшнюю дату."),
  lie("vacation-days", "invented-name", "Остаток берётся из сущности «Табель учёта времени»."),

  // ---- deliveries-report: refresh every 24 hours, uses composition-delivery-cost
  truth("deliveries-report", "units", "Данные отчёта [[report-deliveries-month]] обновляются раз в сутки."),
  truth(
    "deliveries-report",
    "related-cite",
    "Отчёт использует композицию «Стоимость доставки» [[composition-delivery-cost]].",
  ),
  truth(
    "deliveries-report",
    "list",
    "Отчёт «Доставки за месяц» [[report-deliveries-month]]:\n- папка «Маршруты доставки»;\n- показывает количество и стоимость доставок за месяц;\n- обновление — каждые 24 часа.",
  ),
  truth(
    "deliveries-report",
    "paraphrase",
    "Этот отчёт собирает, сколько доставок было за месяц и во что они обошлись; стоимость он берёт из композиции [[composition-delivery-cost]].",
  ),
  truth("deliveries-report", "units-words", "Обновление данных происходит каждые двадцать четыре часа."),
  truth(
    "deliveries-report",
    "heading",
    "#### Доставки за месяц\nЛежит в папке «Маршруты доставки» (внутри «Логистики»). Считает количество и стоимость доставок.",
  ),
  lie("deliveries-report", "figure-wrong-unit", "Данные отчёта обновляются каждые 24 минуты."),
  lie("deliveries-report", "figure-other-noun", "Отчёт показывает 24 доставки за месяц."),
  lie("deliveries-report", "claim-in-force", "Новая схема обновления вступила в силу с сегодняшнего дня."),
  lie("deliveries-report", "claim-passive-state", "Отчёт [[report-deliveries-month]] перестроен, данные актуальны."),
  lie("deliveries-report", "claim-english", "All set: the report [[report-deliveries-month]] has been refreshed."),
  lie(
    "deliveries-report",
    "invented-name",
    "Для деталей по каждой доставке откройте отчёт Детализация Доставок По Дням.",
  ),

  // ---- unpaid-report: overdue after 30 days, entity-invoice
  truth("unpaid-report", "units", "Счёт считается просроченным через месяц — точнее, через 30 дней после даты счёта."),
  truth(
    "unpaid-report",
    "related-cite",
    "Отчёт [[report-unpaid-invoices]] строится по сущности [[entity-invoice]] («Счёт поставщика»).",
  ),
  truth(
    "unpaid-report",
    "polite",
    "Спасибо за вопрос! Отчёт «Неоплаченные счета» [[report-unpaid-invoices]] из папки «Финансы» показывает счета поставщиков с истекшим сроком оплаты.",
  ),
  truth(
    "unpaid-report",
    "conditional",
    "Если с даты счёта прошло больше 30 дней, а оплаты нет, счёт попадёт в этот отчёт.",
  ),
  truth(
    "unpaid-report",
    "table",
    "| | |\n|---|---|\n| Отчёт | [[report-unpaid-invoices]] |\n| Сущность | [[entity-invoice]] |\n| Просрочка | через 30 дней |",
  ),
  lie("unpaid-report", "figure-wrong-unit", "Счёт считается просроченным через 30 рабочих дней."),
  lie("unpaid-report", "figure-other-noun", "Сейчас в отчёте 30 просроченных счетов."),
  lie("unpaid-report", "claim-first-person", "Я отметил просроченные счета в отчёте [[report-unpaid-invoices]]."),
  lie("unpaid-report", "action-outside", "Я направил поставщикам письма о просрочке."),
  lie("unpaid-report", "claim-interjection", "Готово — отчёт обновлён."),
  lie("unpaid-report", "invented-identity", "Детали оплаты смотрите в [[report-payments-history]]."),

  // ---- employee-card: probation 3 months, layout twoColumns, entity-employee
  truth("employee-card", "units", "Испытательный срок нового сотрудника — три месяца, то есть четверть года."),
  truth(
    "employee-card",
    "related-cite",
    "Форма [[form-employee-card]] показывает сущность «Сотрудник» [[entity-employee]] в две колонки.",
  ),
  truth(
    "employee-card",
    "list",
    "- Документ: [[form-employee-card]]\n- Папка: «Кадры»\n- Раскладка: две колонки\n- Испытательный срок: 3 месяца",
  ),
  truth(
    "employee-card",
    "paraphrase",
    "Это карточка для отдела кадров: данные сотрудника из [[entity-employee]] разложены в двух колонках.",
  ),
  truth(
    "employee-card",
    "english",
    "The form [[form-employee-card]] uses a two-column layout; the probation period it mentions is 3 months.",
  ),
  lie("employee-card", "figure-wrong-unit", "Испытательный срок нового сотрудника — 3 недели."),
  lie("employee-card", "figure-other-noun", "В форме 3 колонки."),
  lie("employee-card", "claim-passive-state", "Раскладка формы [[form-employee-card]] изменена на вкладки."),
  lie("employee-card", "claim-english", "I have added a photo field to [[form-employee-card]]."),
  lie("employee-card", "invented-name", "Для приёма на работу используется форма «Анкета кандидата»."),

  // ---- invoice-entity: 5 fields
  truth(
    "invoice-entity",
    "count",
    "У сущности «Счёт поставщика» [[entity-invoice]] пять полей: number, date, supplier, amount и vat.",
  ),
  truth(
    "invoice-entity",
    "list",
    "Поля [[entity-invoice]]:\n1. `number` — номер\n2. `date` — дата\n3. `supplier` — поставщик\n4. `amount` — сумма\n5. `vat` — НДС",
  ),
  truth(
    "invoice-entity",
    "table",
    "| № | Поле |\n|---|---|\n| 1 | number |\n| 2 | date |\n| 3 | supplier |\n| 4 | amount |\n| 5 | vat |",
  ),
  truth(
    "invoice-entity",
    "polite",
    "Пожалуйста: сущность [[entity-invoice]] лежит в папке «Финансы» и описывает счёт поставщика — номер, дату, поставщика, сумму и НДС.",
  ),
  lie("invoice-entity", "figure-wrong", "У сущности [[entity-invoice]] шесть полей."),
  lie("invoice-entity", "claim-first-person", "Я добавила в [[entity-invoice]] поле `dueDate`."),
  lie("invoice-entity", "claim-passive-state", "Поле `vat` удалено из сущности."),
  lie("invoice-entity", "invented-name", "С ней связана форма «Ввод счёта поставщика»."),
  lie("invoice-entity", "claim-english", "The `vat` field has been renamed to `tax`."),
];
