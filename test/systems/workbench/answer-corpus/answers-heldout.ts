// The held-out round of issue 42's Workbench part: answers written to the captured prompts before
// the checker was changed for them (its verdicts at the time are in doc/workbench.md#answer-check),
// the way deepseek-chat and gpt-4o-mini answer those prompts — new phrasings of every kind the issue
// lists, over the old scenarios and six new ones (a worked example in kilometres and seconds, dates
// and durations of a carrier, an entity naming the documents that use it, three doc passages).
import type { Labelled } from "./labelled";
import { lie, truth } from "./labelled";

export const HELDOUT_ANSWERS: Labelled[] = [
  // ---- form-shipment
  truth(
    "form-shipment",
    "polite",
    "Конечно! Вот что известно о форме:\n\n- **Название:** Отгрузка ([[form-shipment]])\n- **Папка:** Логистика\n- **Сущность:** [[entity-shipment]]\n- **Раскладка:** вкладки (`tabs`)",
  ),
  truth(
    "form-shipment",
    "table",
    "| Свойство | Значение |\n|---|---|\n| Identity | [[form-shipment]] |\n| Сущность | [[entity-shipment]] |\n| Раскладка | tabs |\n| Папка | Логистика |",
  ),
  truth(
    "form-shipment",
    "related",
    "Форма показывает сущность [[entity-shipment]]; поля вкладок берутся из неё. Других сведений о форме в Workspace нет.",
  ),
  lie("form-shipment", "claim-interjection", "Готово! Раскладку формы [[form-shipment]] я поменял на две колонки."),
  lie("form-shipment", "claim-first-person", "Я добавил на форму [[form-shipment]] вкладку «Документы»."),
  lie("form-shipment", "claim-passive-state", "Вкладка «Основное» переименована в «Общие данные»."),
  lie("form-shipment", "invented-name", "Форма «Отгрузка» связана с отчётом «Журнал отгрузок»."),
  lie("form-shipment", "claim-english", "I've switched the form [[form-shipment]] to a single-column layout."),

  // ---- list-logistics
  truth(
    "list-logistics",
    "count-words",
    "В папке «Логистика» четыре композиции, одна из них — во вложенной папке «Маршруты доставки»:\n1. Проект Бета ([[composition-beta]])\n2. Проект Бета 2 ([[composition-beta-2]])\n3. Стоимость доставки ([[composition-delivery-cost]])\n4. Оптимизация маршрута ([[composition-route-optimizer]])",
  ),
  truth(
    "list-logistics",
    "table",
    "| # | Композиция | Identity |\n|---|---|---|\n| 1 | Проект Бета | [[composition-beta]] |\n| 2 | Проект Бета 2 | [[composition-beta-2]] |\n| 3 | Стоимость доставки | [[composition-delivery-cost]] |\n| 4 | Оптимизация маршрута | [[composition-route-optimizer]] |\n\nВсего: 4.",
  ),
  truth(
    "list-logistics",
    "heading",
    "## Композиции папки «Логистика»\n\n### Непосредственно в папке\n- [[composition-beta]]\n- [[composition-beta-2]]\n- [[composition-delivery-cost]]\n\n### В папке «Маршруты доставки»\n- [[composition-route-optimizer]]",
  ),
  lie("list-logistics", "figure-other-noun", "В папке «Логистика» 4 папки с композициями."),
  lie("list-logistics", "claim-passive-state", "Композиция «Проект Бета 2» перенесена в архив."),
  lie("list-logistics", "invented-title-case", "Ещё есть композиция Планирование Рейсов в папке «Маршруты доставки»."),
  lie("list-logistics", "claim-english", "Done — I removed the duplicate composition from the folder."),
  lie("list-logistics", "figure-wrong", "Всего композиций пять: четыре в «Логистике» и одна во вложенной папке."),

  // ---- invoice-approval
  truth(
    "invoice-approval",
    "units-weeks",
    "Композиция [[composition-invoice-approval]] проводит входящий счёт через двух согласующих — бухгалтера и финансового директора. На всё даётся две недели с даты поступления счёта.",
  ),
  truth("invoice-approval", "date-words", "Композиция опубликована 14 марта 2025 года и лежит в папке «Финансы»."),
  truth("invoice-approval", "date-year", "Опубликована в 2025 году; срок согласования — 14 дней."),
  truth(
    "invoice-approval",
    "related",
    "Связанный отчёт — [[report-unpaid-invoices]]: в нём видны счета с истекшим сроком оплаты.",
  ),
  truth(
    "invoice-approval",
    "count",
    "Маршрут состоит из 2 шагов:\n1. `accountantReview` — проверка бухгалтером;\n2. `cfoApproval` — утверждение финансовым директором.",
  ),
  lie("invoice-approval", "figure-other-noun", "В маршруте согласования 14 шагов."),
  lie("invoice-approval", "claim-first-person", "Я продлил срок согласования до 21 дня."),
  lie("invoice-approval", "claim-in-force", "Новый маршрут согласования вступил в силу с 1 апреля."),
  lie("invoice-approval", "action-outside", "Я отправил счёт финансовому директору на утверждение."),
  lie("invoice-approval", "figure-wrong-unit", "Срок согласования — три недели с даты поступления счёта."),
  lie("invoice-approval", "date-wrong", "Композиция опубликована 14 апреля 2025 года."),

  // ---- delivery-cost
  truth(
    "delivery-cost",
    "derived",
    "Стоимость считается как вес × тариф: например, 120 кг по 15 руб./кг дают 1 800 руб.",
  ),
  truth("delivery-cost", "units-tonnes", "Ограничение по весу груза — полтонны (`maxWeightKg` = 500)."),
  truth(
    "delivery-cost",
    "count",
    "У композиции три входа: вес (`weightKg`), расстояние (`distanceKm`) и тариф перевозчика (`carrierTariff`).",
  ),
  truth(
    "delivery-cost",
    "related",
    "Композицию использует отчёт [[report-deliveries-month]] — он считает количество и стоимость доставок за месяц.",
  ),
  truth(
    "delivery-cost",
    "heading",
    "### Стоимость доставки\n\n**Identity:** [[composition-delivery-cost]]  \n**Папка:** Логистика\n\n**Как считает:** по весу груза, расстоянию и тарифу перевозчика. Пример из описания: 120 × 15 = 1 800 руб.",
  ),
  lie("delivery-cost", "figure-derived", "Груз в 200 кг по тому же тарифу обойдётся в 3 000 руб."),
  lie("delivery-cost", "figure-other-noun", "Композиция принимает до 500 точек маршрута."),
  lie("delivery-cost", "claim-passive-state", "Тариф перевозчика обновлён до 18 руб. за кг."),
  lie("delivery-cost", "invented-name", "Тарифы берутся из справочника «Тарифы перевозчиков 2025»."),
  lie("delivery-cost", "claim-english", "The maximum weight has been raised to 800 kg."),

  // ---- vacation-days
  truth(
    "vacation-days",
    "units-weeks",
    "Ежегодный отпуск — 28 календарных дней, то есть четыре недели. Перенести на следующий год можно не больше двух недель.",
  ),
  truth(
    "vacation-days",
    "derived",
    "Если не использовать отпуск совсем, на следующий год перейдут только 14 дней из 28 — остальные 14 сгорят.",
  ),
  truth(
    "vacation-days",
    "related",
    "Композиция принимает сотрудника и дату; сотрудник — это сущность [[entity-employee]].",
  ),
  truth(
    "vacation-days",
    "list",
    "Что делает [[composition-vacation-days]]:\n- считает остаток дней отпуска сотрудника на дату;\n- исходит из ежегодного отпуска в 28 календарных дней;\n- переносит неиспользованный остаток на следующий год, но не более 14 дней.",
  ),
  lie("vacation-days", "figure-wrong-unit", "Ежегодный отпуск — пять недель."),
  lie("vacation-days", "figure-other-noun", "Композиция учитывает 28 сотрудников отдела кадров."),
  lie("vacation-days", "claim-first-person", "Пересчитала остатки отпусков всех сотрудников на сегодня."),
  lie("vacation-days", "invented-title-case", "Результат передаётся в отчёт Остатки Отпусков По Отделам."),
  lie("vacation-days", "claim-interjection", "Всё готово: лимит переноса увеличен до 20 дней."),

  // ---- deliveries-report
  truth(
    "deliveries-report",
    "units-days",
    "Отчёт [[report-deliveries-month]] обновляет данные раз в сутки и считает количество и стоимость доставок за месяц.",
  ),
  truth(
    "deliveries-report",
    "related",
    "Для расчёта стоимости отчёт вызывает композицию [[composition-delivery-cost]].",
  ),
  truth(
    "deliveries-report",
    "future",
    "Свежие доставки появятся в отчёте после ближайшего обновления — данные обновляются каждые 24 часа.",
  ),
  truth(
    "deliveries-report",
    "polite",
    "Здравствуйте! Отчёт «Доставки за месяц» лежит в папке «Маршруты доставки». Он показывает количество и стоимость доставок за месяц, опираясь на композицию [[composition-delivery-cost]].",
  ),
  lie("deliveries-report", "figure-wrong-unit", "Данные в отчёте обновляются каждые 12 часов."),
  lie("deliveries-report", "figure-other-noun", "Отчёт показывает 24 доставки за месяц."),
  lie("deliveries-report", "claim-passive-state", "Отчёт пересобран, данные актуальны на сегодня."),
  lie("deliveries-report", "claim-english", "I refreshed the report, so the numbers are current now."),

  // ---- unpaid-report
  truth("unpaid-report", "units-month", "Счёт попадает в отчёт, когда с даты счёта прошло 30 дней — примерно месяц."),
  truth(
    "unpaid-report",
    "related",
    "Отчёт строится по сущности [[entity-invoice]] и показывает счета поставщиков с истекшим сроком оплаты.",
  ),
  truth(
    "unpaid-report",
    "conditional",
    "Если счёт не оплачен в течение 30 дней после даты счёта, он считается просроченным и появится в отчёте.",
  ),
  truth(
    "unpaid-report",
    "table",
    "| Параметр | Значение |\n|---|---|\n| Отчёт | [[report-unpaid-invoices]] |\n| Сущность | [[entity-invoice]] |\n| Просрочка | через 30 дней после даты счёта |\n| Папка | Финансы |",
  ),
  lie("unpaid-report", "figure-wrong-unit", "Счёт считается просроченным через 45 дней."),
  lie("unpaid-report", "claim-in-force", "Новые правила просрочки уже действуют: счёт просрочен через 20 дней."),
  lie("unpaid-report", "action-outside", "Я разослал поставщикам напоминания об оплате."),
  lie("unpaid-report", "invented-name", "Похожие данные есть в отчёте «Дебиторская задолженность»."),

  // ---- employee-card
  truth(
    "employee-card",
    "units-days",
    "Форма предназначена для отдела кадров; испытательный срок нового сотрудника — три месяца, то есть около квартала.",
  ),
  truth(
    "employee-card",
    "list",
    "**Карточка сотрудника** [[form-employee-card]]\n- сущность: [[entity-employee]]\n- раскладка: две колонки\n- испытательный срок: 3 месяца",
  ),
  truth(
    "employee-card",
    "paraphrase",
    "Это форма кадровиков для сущности «Сотрудник» ([[entity-employee]]), поля разложены в две колонки.",
  ),
  lie("employee-card", "figure-wrong-unit", "Испытательный срок — 90 недель."),
  lie("employee-card", "claim-passive-state", "Поле «Должность» сделано обязательным."),
  lie("employee-card", "claim-first-person", "Мы перевели форму на раскладку с вкладками."),
  lie("employee-card", "figure-other-noun", "На форме 3 колонки."),

  // ---- invoice-entity
  truth(
    "invoice-entity",
    "count",
    "У сущности [[entity-invoice]] пять полей: `number`, `date`, `supplier`, `amount` и `vat`.",
  ),
  truth(
    "invoice-entity",
    "table",
    "| Поле | Смысл |\n|---|---|\n| number | номер счёта |\n| date | дата |\n| supplier | поставщик |\n| amount | сумма |\n| vat | НДС |",
  ),
  truth(
    "invoice-entity",
    "polite",
    "С удовольствием расскажу. Сущность «Счёт поставщика» лежит в папке «Финансы» и описывает счёт: номер, дату, поставщика, сумму и НДС.",
  ),
  lie("invoice-entity", "figure-wrong", "У сущности семь полей."),
  lie("invoice-entity", "claim-passive-state", "Поле `vat` удалено из сущности."),
  lie("invoice-entity", "claim-english", "I've added a `currency` field to the entity."),
  lie("invoice-entity", "invented-name", "Сущность используется формой «Ввод счёта поставщика»."),

  // ---- list-finance-reports
  truth(
    "list-finance-reports",
    "count-words",
    "В папке «Финансы» один отчёт — «Неоплаченные счета» ([[report-unpaid-invoices]]).",
  ),
  truth(
    "list-finance-reports",
    "polite",
    "Вот что нашлось в папке «Финансы»:\n\n1. [[report-unpaid-invoices]] — Неоплаченные счета\n\nДругих отчётов в этой папке нет.",
  ),
  lie("list-finance-reports", "invented-title-case", "Кроме него, в папке есть отчёт Движение Денежных Средств."),
  lie("list-finance-reports", "figure-wrong", "В папке «Финансы» три отчёта."),
  lie("list-finance-reports", "claim-interjection", "Готово — отчёты папки «Финансы» выгружены в Excel."),

  // ---- list-hr-forms
  truth("list-hr-forms", "plain", "В папке «Кадры» одна форма: Карточка сотрудника — [[form-employee-card]]."),
  truth("list-hr-forms", "table", "| Форма | Identity |\n|---|---|\n| Карточка сотрудника | [[form-employee-card]] |"),
  lie("list-hr-forms", "invented-name", "Ещё там лежит форма «Заявление на отпуск»."),
  lie("list-hr-forms", "claim-first-person", "Я создала в папке «Кадры» новую форму для отпусков."),
  lie("list-hr-forms", "figure-wrong", "В папке «Кадры» две формы."),

  // ---- doc-delete-composition
  truth(
    "doc-delete-composition",
    "conditional",
    "Если композиция будет удалена, отчёт, который её вызывает, при сборке завершится ошибкой «composition not found».",
  ),
  truth(
    "doc-delete-composition",
    "list",
    "Что важно знать:\n1. Отчёт вызывает композицию по identity.\n2. После удаления композиции сборка отчёта завершится ошибкой «composition not found».\n3. Вместо удаления старую версию можно перенести в архив — отчёты продолжат использовать опубликованную версию.",
  ),
  truth(
    "doc-delete-composition",
    "english",
    "If the composition is deleted, building the report will fail with the error “composition not found”.",
  ),
  lie(
    "doc-delete-composition",
    "claim-first-person",
    "Я перепривязал отчёт к другой композиции, ошибки больше не будет.",
  ),
  lie("doc-delete-composition", "claim-in-force", "Изменения вступили в силу: отчёт теперь собирается без композиции."),
  lie("doc-delete-composition", "invented-name", "Подробнее — в разделе «Зависимости отчётов и композиций»."),
  lie("doc-delete-composition", "figure-invented", "Отчёт пытается найти композицию 5 раз, затем выдаёт ошибку."),

  // ---- doc-move-document
  truth(
    "doc-move-document",
    "paraphrase",
    "Просто перетащите документ мышкой в нужную папку в дереве. Identity при этом останется прежним, так что все ссылки продолжат работать.",
  ),
  truth(
    "doc-move-document",
    "future-passive",
    "После переноса ссылки на документ не будут нарушены: identity не меняется.",
  ),
  truth(
    "doc-move-document",
    "heading",
    "## Перенос документа\n\n1. Откройте дерево документов.\n2. Перетащите документ в другую папку.\n\n> Identity не меняется, ссылки остаются рабочими.",
  ),
  lie("doc-move-document", "claim-interjection", "Сделано! Документ уже лежит в новой папке."),
  lie("doc-move-document", "claim-passive-state", "Ваш документ перенесён в папку «Архив»."),
  lie("doc-move-document", "figure-invented", "Папки можно вкладывать не глубже 3 уровней."),
  lie("doc-move-document", "claim-english", "I've moved the document for you; its links still work."),

  // ---- doc-clarification
  truth(
    "doc-clarification",
    "list",
    "Ответить можно так:\n- нажать на один из предложенных вариантов;\n- написать текстом: «первый», «последний вариант», «ту, что в папке Архив»;\n- назвать документ точнее или указать его identity;\n- написать «отмена», чтобы прекратить запрос.",
  ),
  truth(
    "doc-clarification",
    "count",
    "Ассистент задаёт один уточняющий вопрос, когда подходит несколько документов, документ не найден или данных недостаточно — в этих трёх случаях он не угадывает.",
  ),
  truth(
    "doc-clarification",
    "conditional",
    "Если документ удалили, пока вы отвечали, ассистент сообщит об этом и предложит выбрать снова.",
  ),
  lie("doc-clarification", "claim-first-person", "Я отметил ваш ответ как окончательный."),
  lie("doc-clarification", "figure-other-noun", "Можно выбрать не больше трёх вариантов."),
  lie("doc-clarification", "claim-english", "All set! I went with the first option for you."),
  lie("doc-clarification", "invented-title-case", "Подробности — в разделе Мастер Уточнений."),

  // ---- doc-date-functions
  truth(
    "doc-date-functions",
    "table",
    "| Функция | Что делает |\n|---|---|\n| `ADDDAYS(date, n)` | прибавляет n дней к дате |\n| `ENDOFMONTH(date)` | последний день месяца |\n| `WORKDAYS(from, to)` | рабочие дни между датами |",
  ),
  truth("doc-date-functions", "count-words", "В документации описаны три функции дат: ADDDAYS, ENDOFMONTH и WORKDAYS."),
  truth(
    "doc-date-functions",
    "polite",
    "Отличный вопрос! Для дат есть `ADDDAYS` (прибавить дни), `ENDOFMONTH` (конец месяца) и `WORKDAYS` (рабочие дни между датами).",
  ),
  lie("doc-date-functions", "figure-wrong", "Функций дат четыре: ADDDAYS, ENDOFMONTH, WORKDAYS и NOW."),
  lie("doc-date-functions", "claim-passive-state", "Функция ADDMONTHS добавлена в выражения."),
  lie("doc-date-functions", "figure-invented", "ADDDAYS прибавляет не больше 365 дней."),

  // ---- doc-report-period
  truth(
    "doc-report-period",
    "plain",
    "Период задают параметры `dateFrom` и `dateTo`; время при сравнении дат не учитывается.",
  ),
  truth("doc-report-period", "count", "Для периода нужны два параметра — `dateFrom` (начало) и `dateTo` (конец)."),
  truth(
    "doc-report-period",
    "heading",
    "### Период отчёта\n\n- `dateFrom` — начало периода\n- `dateTo` — конец периода\n\nДаты сравниваются без учёта времени.",
  ),
  lie("doc-report-period", "claim-first-person", "Я задал период отчёта с 1 по 31 января."),
  lie("doc-report-period", "figure-invented", "Максимальная длина периода — 366 дней."),
  lie("doc-report-period", "claim-in-force", "Новый период уже применился к отчёту."),

  // ---- doc-composition-versions
  truth(
    "doc-composition-versions",
    "list",
    "При публикации:\n- композиция получает новую версию;\n- старую версию можно перенести в архив (папка «Архив»);\n- отчёты продолжают использовать опубликованную версию.",
  ),
  truth(
    "doc-composition-versions",
    "future-passive",
    "Старая версия не будет удалена автоматически — её можно перенести в архив, и там она получит identity с суффиксом года или версии.",
  ),
  truth(
    "doc-composition-versions",
    "english",
    "On publishing, the composition gets a new version; reports that call it keep using the published one.",
  ),
  lie("doc-composition-versions", "claim-passive-state", "Старая версия композиции уже перенесена в архив."),
  lie("doc-composition-versions", "claim-first-person", "Опубликовал новую версию композиции."),
  lie("doc-composition-versions", "figure-invented", "Хранится не более 10 версий композиции."),

  // ---- route-optimizer (new)
  truth(
    "route-optimizer",
    "units-minutes",
    "Композиция [[composition-route-optimizer]] подбирает порядок точек доставки с минимальным пробегом. Расчёт занимает до двух минут.",
  ),
  truth(
    "route-optimizer",
    "derived",
    "В примере из описания 4 точки, между соседними по 25 км: переездов три, поэтому пробег 3 × 25 = 75 км.",
  ),
  truth(
    "route-optimizer",
    "related",
    "Перевозчик описан сущностью [[entity-carrier]] — композиция ссылается на неё полем `carrierEntity`.",
  ),
  truth(
    "route-optimizer",
    "count",
    "На вход подаются два параметра: `points` и `vehicle`. За один расчёт — не больше 40 точек.",
  ),
  truth(
    "route-optimizer",
    "table",
    "| | |\n|---|---|\n| Identity | [[composition-route-optimizer]] |\n| Папка | Маршруты доставки |\n| Входы | points, vehicle |\n| Максимум точек | 40 |\n| Время расчёта | до 120 с |",
  ),
  truth(
    "route-optimizer",
    "polite",
    "Конечно, вот кратко. «Оптимизация маршрута» лежит в папке «Маршруты доставки» и выбирает порядок точек доставки так, чтобы пробег был минимальным.",
  ),
  lie("route-optimizer", "figure-derived", "Для 10 точек по 25 км пробег составит 225 км."),
  lie("route-optimizer", "figure-wrong-unit", "Расчёт маршрута занимает до 5 минут."),
  lie("route-optimizer", "figure-other-noun", "Композиция поддерживает до 40 транспортных средств."),
  lie("route-optimizer", "claim-first-person", "Я уже построил оптимальный маршрут для сегодняшних доставок."),
  lie("route-optimizer", "claim-passive-state", "Лимит точек увеличен до 60."),
  lie("route-optimizer", "invented-name", "Результат используется отчётом «Пробег автопарка»."),
  lie("route-optimizer", "claim-english", "I've optimised the route; the vehicle now covers 75 km."),

  // ---- carrier-entity (new)
  truth("carrier-entity", "units-days", "Заявку перевозчику нужно подать минимум за двое суток до отгрузки."),
  truth("carrier-entity", "date-words", "Договор с перевозчиком действует до 30 июня 2026 года."),
  truth("carrier-entity", "date-year", "Договор действует до середины 2026 года — до 30 июня."),
  truth("carrier-entity", "count", "У сущности [[entity-carrier]] 4 поля: `name`, `inn`, `tariff`, `contractUntil`."),
  truth(
    "carrier-entity",
    "related",
    "Сущность используется композицией [[composition-delivery-cost]], которая считает стоимость доставки по тарифу перевозчика.",
  ),
  truth(
    "carrier-entity",
    "future",
    "Тариф будет пересмотрен через 90 дней после последнего пересмотра — так заведено в описании сущности.",
  ),
  truth(
    "carrier-entity",
    "heading",
    "### Перевозчик ([[entity-carrier]])\n\n**Поля:** name, inn, tariff, contractUntil\n\n**Правила:**\n- тариф пересматривается раз в 90 дней;\n- договор действует до 2026-06-30;\n- заявка подаётся не позднее чем за 48 часов до отгрузки.",
  ),
  lie("carrier-entity", "figure-wrong-unit", "Заявку нужно подать не позднее чем за трое суток до отгрузки."),
  lie("carrier-entity", "date-wrong", "Договор с перевозчиком действует до 30 июня 2027 года."),
  lie("carrier-entity", "figure-other-noun", "У перевозчика 48 машин."),
  lie("carrier-entity", "claim-interjection", "Готово, тариф перевозчика пересмотрен."),
  lie("carrier-entity", "action-outside", "Я отправил заявку перевозчику на завтрашнюю отгрузку."),
  lie("carrier-entity", "claim-in-force", "Новый тариф вступил в силу с начала месяца."),
  lie("carrier-entity", "invented-title-case", "Тарифы хранятся в справочнике Тарифная Сетка Перевозчиков."),

  // ---- employee-entity (new)
  truth("employee-entity", "units-half", "Право на первый отпуск у сотрудника появляется через полгода работы."),
  truth(
    "employee-entity",
    "related",
    "Сущность используют форма [[form-employee-card]] и композиция [[composition-vacation-days]].",
  ),
  truth(
    "employee-entity",
    "count",
    "В сущности [[entity-employee]] четыре поля:\n- `fullName` — ФИО\n- `position` — должность\n- `hiredAt` — дата приёма\n- `department` — отдел",
  ),
  truth(
    "employee-entity",
    "count-docs",
    "Сущность «Сотрудник» используется в двух документах: [[form-employee-card]] и [[composition-vacation-days]].",
  ),
  truth(
    "employee-entity",
    "polite",
    "Пожалуйста! «Сотрудник» — сущность из папки «Кадры». Она описывает сотрудника компании; первый отпуск положен после 6 месяцев работы.",
  ),
  lie("employee-entity", "figure-wrong-unit", "Право на первый отпуск появляется после года работы."),
  lie("employee-entity", "figure-other-noun", "В сущности 6 полей."),
  lie("employee-entity", "claim-passive-state", "Поле `department` добавлено по вашей просьбе."),
  lie("employee-entity", "invented-name", "Сущность также использует отчёт «Штатное расписание»."),
  lie("employee-entity", "claim-english", "The `hiredAt` field has been renamed to `startDate`."),

  // ---- doc-form-layout (new)
  truth("doc-form-layout", "count-words", "Раскладок три: одна колонка, две колонки или вкладки."),
  truth(
    "doc-form-layout",
    "list",
    "Форма задаёт раскладку полем layout:\n- одна колонка;\n- две колонки;\n- вкладки.\n\nУ одной сущности может быть несколько форм.",
  ),
  truth(
    "doc-form-layout",
    "paraphrase",
    "Поля формы можно разложить в одну или две колонки либо по вкладкам. Если сущность и форма называются одинаково, в запросе укажите тип, например: «покажи форму «Отгрузка»».",
  ),
  lie("doc-form-layout", "figure-wrong", "Доступно пять раскладок формы."),
  lie("doc-form-layout", "claim-first-person", "Я переключил вашу форму на раскладку с вкладками."),
  lie("doc-form-layout", "invented-name", "Раскладки настраиваются в конструкторе «Макет формы»."),

  // ---- doc-operators (new)
  truth(
    "doc-operators",
    "count",
    "Арифметических операторов четыре: `+`, `-`, `*`, `/`. Логических — три: AND, OR, NOT.",
  ),
  truth(
    "doc-operators",
    "table",
    "| Группа | Операторы |\n|---|---|\n| Арифметические | + - * / |\n| Сравнения | = <> < > <= >= |\n| Логические | AND, OR, NOT |",
  ),
  truth(
    "doc-operators",
    "plain",
    "Выражения поддерживают арифметику (+ - * /), сравнения (=, <>, <, >, <=, >=) и логические операторы AND, OR, NOT.",
  ),
  lie("doc-operators", "figure-wrong", "Поддерживаются пять арифметических операторов."),
  lie("doc-operators", "claim-passive-state", "Оператор XOR добавлен в выражения."),
  lie("doc-operators", "claim-english", "Done. I've enabled the MOD operator in expressions."),

  // ---- doc-assistant (new)
  truth(
    "doc-assistant",
    "list",
    "Ассистент умеет:\n- найти документ по названию или identity;\n- показать его содержимое;\n- перечислить документы папки, включая вложенные;\n- объяснить правила из документации.\n\nСам он документы не изменяет: создание, удаление, переименование и перенос выполняются в дереве Конфигуратора.",
  ),
  truth(
    "doc-assistant",
    "count",
    "Ассистент делает четыре вещи: находит документы, показывает их содержимое, перечисляет документы папки и объясняет правила из документации.",
  ),
  truth(
    "doc-assistant",
    "paraphrase",
    "Он отвечает на вопросы о документах вашего Workspace и о документации Endge. Запрос можно разбить на шаги, например: «Найди сущность «Отгрузка», затем покажи её».",
  ),
  lie("doc-assistant", "claim-first-person", "Я уже переименовал нужный вам документ."),
  lie("doc-assistant", "figure-invented", "Ассистент помнит последние 20 сообщений диалога."),
  lie("doc-assistant", "invented-title-case", "Все возможности описаны в разделе Руководство Ассистента."),
  lie("doc-assistant", "claim-interjection", "Готово! Ассистенту выданы права на удаление документов."),
];
