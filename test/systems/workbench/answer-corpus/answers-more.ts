// More labelled answers to the same captured prompts: the styles and lies a second reviewer wrote
// (markdown emphasis, nested lists, closing offers, restated units and dates, counts), so no one
// phrasing carries a kind.
import type { Labelled } from "./labelled";
import { lie, truth } from "./labelled";

export const MORE_ANSWERS: Labelled[] = [
  // form-shipment
  truth(
    "form-shipment",
    "closing",
    "Форма «Отгрузка» [[form-shipment]] открывает сущность [[entity-shipment]] во вкладках. Если хотите, могу показать и саму сущность.",
  ),
  truth(
    "form-shipment",
    "emphasis",
    "**Форма:** «Отгрузка» ([[form-shipment]])\n**Где лежит:** папка «Логистика»\n**Что показывает:** сущность `entity-shipment`",
  ),
  lie("form-shipment", "claim-no-subject", "Поменяла раскладку формы [[form-shipment]] на одну колонку."),
  lie("form-shipment", "action-outside", "Я создал задачу в трекере, чтобы добавить в форму поле веса."),
  lie("form-shipment", "claim-in-force", "Изменения в форме [[form-shipment]] уже вступили в силу."),

  // list-logistics
  truth(
    "list-logistics",
    "nested",
    "Папка «Логистика» [[folder-logistics]]:\n- Проект Бета — [[composition-beta]]\n- Проект Бета 2 — [[composition-beta-2]]\n- Стоимость доставки — [[composition-delivery-cost]]\n- Маршруты доставки (вложенная папка):\n  - Оптимизация маршрута — [[composition-route-optimizer]]",
  ),
  truth("list-logistics", "count-digits", "Итого 4 композиции, из них 3 — непосредственно в папке «Логистика»."),
  lie("list-logistics", "figure-wrong", "В папке «Логистика» шесть композиций."),
  lie("list-logistics", "claim-interjection", "Готово. Список композиций папки «Логистика» отсортирован и сохранён."),
  lie("list-logistics", "invented-name", "В папке лежат композиции «Проект Бета», «Проект Бета 2» и «Проект Гамма»."),

  // invoice-approval
  truth("invoice-approval", "date-dots", "Дата публикации композиции [[composition-invoice-approval]] — 14.03.2025."),
  truth("invoice-approval", "emphasis", "Срок согласования — **14 дней** (две недели) с даты поступления счёта."),
  truth(
    "invoice-approval",
    "closing",
    "Это всё, что есть о композиции [[composition-invoice-approval]] в Workspace. Нужна информация об отчёте [[report-unpaid-invoices]]?",
  ),
  lie("invoice-approval", "date-wrong", "Композиция действует с 2024 года."),
  lie("invoice-approval", "figure-wrong-unit", "На согласование отводится двадцать один день."),
  lie("invoice-approval", "claim-passive-state", "Срок согласования сокращён до 10 дней."),
  lie(
    "invoice-approval",
    "invented-title-case",
    "После согласования счёт передаётся в композицию Оплата Счетов Поставщикам.",
  ),

  // delivery-cost
  truth(
    "delivery-cost",
    "derived-explained",
    "Формула простая: стоимость = вес × тариф. В примере описания: 120 × 15 = 1 800 руб.",
  ),
  truth("delivery-cost", "units-tonnes", "Максимальный вес — 0,5 т (500 кг)."),
  truth(
    "delivery-cost",
    "closing",
    "Хотите посмотреть отчёт [[report-deliveries-month]], который использует эту композицию?",
  ),
  lie("delivery-cost", "figure-derived", "В примере описания 120 кг × 15 руб. = 18 000 руб."),
  lie("delivery-cost", "claim-in-force", "Новый тариф перевозчика вступил в силу с 1 апреля."),
  lie("delivery-cost", "claim-first-person", "Мы увеличили допустимый вес до 600 кг."),

  // vacation-days
  truth("vacation-days", "units-days-words", "Ежегодно сотруднику положено двадцать восемь календарных дней отпуска."),
  truth(
    "vacation-days",
    "list",
    "- Что считает: остаток дней отпуска на дату\n- Входы: сотрудник, дата\n- Отпуск в год: 28 дней\n- Перенос: не более 14 дней",
  ),
  truth(
    "vacation-days",
    "heading",
    "## Расчёт отпускных дней\n\nКомпозиция [[composition-vacation-days]] лежит в папке «Кадры» и использует сущность [[entity-employee]].",
  ),
  lie("vacation-days", "figure-other-noun", "Отпуск делится на двадцать восемь частей."),
  lie("vacation-days", "claim-english", "I've carried over the unused days for everyone."),
  lie("vacation-days", "invented-identity", "Данные о сотрудниках берутся из [[entity-staff]]."),

  // deliveries-report
  truth("deliveries-report", "units-day", "Данные отчёта обновляются раз в сутки — каждые 24 часа."),
  truth(
    "deliveries-report",
    "polite",
    "Пожалуйста! Отчёт [[report-deliveries-month]] показывает, сколько было доставок за месяц и сколько они стоили.",
  ),
  truth(
    "deliveries-report",
    "closing",
    "Если нужно, расскажу подробнее о композиции [[composition-delivery-cost]], на которой он основан.",
  ),
  lie("deliveries-report", "figure-wrong-unit", "Данные обновляются каждые двенадцать часов."),
  lie("deliveries-report", "action-outside", "Я подписал вас на рассылку этого отчёта."),
  lie("deliveries-report", "claim-first-person", "Я пересобрал отчёт за прошлый месяц."),

  // unpaid-report
  truth("unpaid-report", "units-words", "Просроченным счёт становится через тридцать дней после даты счёта."),
  truth(
    "unpaid-report",
    "list",
    "**Неоплаченные счета** [[report-unpaid-invoices]]\n- папка: «Финансы»\n- данные: сущность [[entity-invoice]]\n- просрочка: 30 дней с даты счёта",
  ),
  truth("unpaid-report", "paraphrase", "Отчёт собирает счета поставщиков, срок оплаты которых уже истёк."),
  lie("unpaid-report", "figure-wrong-unit", "Счёт считается просроченным через тридцать недель."),
  lie("unpaid-report", "claim-passive-state", "Просроченные счета оплачены."),
  lie("unpaid-report", "invented-name", "Оплаченные счета смотрите в отчёте «Оплаченные счета»."),

  // employee-card
  truth("employee-card", "units-words", "Испытательный срок — три месяца."),
  truth(
    "employee-card",
    "polite",
    "Конечно! «Карточка сотрудника» [[form-employee-card]] — форма для отдела кадров в папке «Кадры».",
  ),
  truth(
    "employee-card",
    "table",
    "| Свойство | Значение |\n|---|---|\n| Сущность | entity-employee |\n| Раскладка | twoColumns |\n| Испытательный срок | 3 месяца |",
  ),
  lie("employee-card", "figure-wrong-unit", "Испытательный срок — полгода."),
  lie("employee-card", "figure-wrong-unit", "Испытательный срок — 6 месяцев."),
  lie("employee-card", "claim-in-force", "Новая раскладка формы вступила в силу."),
  lie("employee-card", "action-outside", "Я отправил карточку на согласование в отдел кадров."),

  // invoice-entity
  truth(
    "invoice-entity",
    "paraphrase",
    "Это сущность для счетов поставщиков: в ней хранятся номер и дата счёта, поставщик, сумма и НДС.",
  ),
  truth("invoice-entity", "english", "[[entity-invoice]] has five fields: number, date, supplier, amount and vat."),
  truth(
    "invoice-entity",
    "heading",
    "### Счёт поставщика\n`entity-invoice`, папка «Финансы». Поля: number, date, supplier, amount, vat.",
  ),
  lie("invoice-entity", "figure-wrong", "У сущности 4 поля."),
  lie("invoice-entity", "claim-interjection", "Сделано — поле `vat` теперь необязательное."),
  lie("invoice-entity", "claim-in-force", "Новое поле `dueDate` вступило в силу."),

  // list-finance-reports
  truth(
    "list-finance-reports",
    "paraphrase",
    "Отчёт в этой папке один — про неоплаченные счета поставщиков: [[report-unpaid-invoices]].",
  ),
  truth(
    "list-finance-reports",
    "closing",
    "Других отчётов в «Финансах» нет. Показать содержимое [[report-unpaid-invoices]]?",
  ),
  lie("list-finance-reports", "figure-wrong", "В папке «Финансы» 3 отчёта."),
  lie("list-finance-reports", "claim-first-person", "Я переименовала отчёт в «Просроченные счета»."),

  // list-hr-forms
  truth("list-hr-forms", "heading", "### Формы папки «Кадры»\n1. «Карточка сотрудника» — [[form-employee-card]]"),
  truth("list-hr-forms", "closing", "В «Кадрах» одна форма: [[form-employee-card]]. Могу показать её подробнее."),
  lie("list-hr-forms", "claim-english", "The form [[form-employee-card]] was duplicated for the new department."),
  lie("list-hr-forms", "invented-title-case", "В папке также есть форма Заявка На Командировку."),

  // doc-delete-composition
  truth(
    "doc-delete-composition",
    "table",
    "| Ситуация | Что будет |\n|---|---|\n| композиция удалена | сборка отчёта завершится ошибкой «composition not found» |\n| старая версия в архиве | отчёт использует опубликованную версию |",
  ),
  truth("doc-delete-composition", "closing", "Так что перед удалением композиции проверьте, какие отчёты её вызывают."),
  lie("doc-delete-composition", "claim-in-force", "Удаление композиции вступило в силу, отчёт больше не собирается."),
  lie("doc-delete-composition", "action-outside", "Я уведомил владельцев отчётов об удалении композиции."),

  // doc-move-document
  truth(
    "doc-move-document",
    "english",
    "Drag the document to another folder in the tree; its identity does not change, so links keep working.",
  ),
  truth(
    "doc-move-document",
    "future",
    "После переноса ссылки на документ будут работать, потому что identity не меняется.",
  ),
  lie("doc-move-document", "claim-passive-state", "Ссылки на документ обновлены после переноса."),
  lie("doc-move-document", "figure-invented", "Перенос занимает около 5 минут."),

  // doc-clarification
  truth(
    "doc-clarification",
    "heading",
    "### Как ответить\n- кнопкой с вариантом;\n- словами: «первый», «последний вариант»;\n- «отмена» — прекратить запрос.",
  ),
  truth("doc-clarification", "new-question", "Новый независимый вопрос закрывает неотвеченное уточнение."),
  lie("doc-clarification", "claim-interjection", "Готово: уточнение снято, ассистент выбрал «первый»."),
  lie("doc-clarification", "invented-name", "Подробнее — в документе «Регламент уточнений»."),

  // doc-date-functions
  truth(
    "doc-date-functions",
    "polite",
    "Конечно! Есть ADDDAYS(date, n), ENDOFMONTH(date) и WORKDAYS(from, to) — сдвиг даты, конец месяца и рабочие дни.",
  ),
  truth(
    "doc-date-functions",
    "where",
    "Функции дат можно использовать в выражениях шагов композиций и в вычисляемых полях форм.",
  ),
  lie("doc-date-functions", "figure-invented", "WORKDAYS учитывает 5 рабочих дней в неделе."),
  lie("doc-date-functions", "claim-passive-state", "Функция ADDDAYS исправлена и теперь учитывает выходные."),

  // doc-report-period
  truth(
    "doc-report-period",
    "heading",
    "## Период отчёта\nЗадаётся параметрами `dateFrom` и `dateTo`. Время в датах не учитывается.",
  ),
  truth(
    "doc-report-period",
    "conditional",
    "Если для отчёта не заданы собственные права, право на чтение наследуется от папки.",
  ),
  lie("doc-report-period", "claim-in-force", "Новые параметры периода вступили в силу."),
  lie("doc-report-period", "date-wrong", "По умолчанию период начинается 1 января 2025 года."),

  // doc-composition-versions
  truth(
    "doc-composition-versions",
    "paraphrase",
    "Публикация = новая версия. Отчёты продолжают вызывать опубликованную версию, а старую можно убрать в «Архив».",
  ),
  truth("doc-composition-versions", "closing", "Если нужно, подскажу, как найти архивные версии в папке «Архив»."),
  lie("doc-composition-versions", "claim-first-person", "Я перенёс устаревшие версии в «Архив»."),
  lie("doc-composition-versions", "figure-invented", "Старая версия хранится 30 дней, потом удаляется."),
];
