// Labelled answers to the captured prompts of the folder-list scenarios.
import type { Labelled } from "./labelled";
import { lie, truth } from "./labelled";

export const LIST_ANSWERS: Labelled[] = [
  // ---- list-logistics: 4 compositions (one in the nested folder «Маршруты доставки»)
  truth(
    "list-logistics",
    "list",
    "В папке «Логистика» [[folder-logistics]] (с вложенными) 4 композиции:\n- «Проект Бета» [[composition-beta]]\n- «Проект Бета 2» [[composition-beta-2]]\n- «Стоимость доставки» [[composition-delivery-cost]]\n- «Оптимизация маршрута» [[composition-route-optimizer]] — во вложенной папке",
  ),
  truth(
    "list-logistics",
    "count-words",
    "Нашлось четыре композиции. Три лежат прямо в «Логистике», а «Оптимизация маршрута» [[composition-route-optimizer]] — во вложенной папке.",
  ),
  truth(
    "list-logistics",
    "table",
    "| # | Композиция | Identity |\n|---|---|---|\n| 1 | Проект Бета | [[composition-beta]] |\n| 2 | Проект Бета 2 | [[composition-beta-2]] |\n| 3 | Стоимость доставки | [[composition-delivery-cost]] |\n| 4 | Оптимизация маршрута | [[composition-route-optimizer]] |",
  ),
  truth(
    "list-logistics",
    "polite",
    "Конечно, вот композиции папки «Логистика»: [[composition-beta]], [[composition-beta-2]], [[composition-delivery-cost]] и [[composition-route-optimizer]]. Всего их 4.",
  ),
  truth(
    "list-logistics",
    "heading",
    "## Композиции в «Логистике»\n\n1. Проект Бета — [[composition-beta]]\n2. Проект Бета 2 — [[composition-beta-2]]\n3. Стоимость доставки — [[composition-delivery-cost]]\n4. Оптимизация маршрута — [[composition-route-optimizer]]",
  ),
  truth(
    "list-logistics",
    "paraphrase",
    "Помимо двух учебных проектов («Проект Бета» [[composition-beta]] и «Проект Бета 2» [[composition-beta-2]]), в папке есть расчёт стоимости доставки [[composition-delivery-cost]] и оптимизация маршрута [[composition-route-optimizer]].",
  ),
  truth(
    "list-logistics",
    "english",
    "Found 4 compositions in the folder [[folder-logistics]]: [[composition-beta]], [[composition-beta-2]], [[composition-delivery-cost]] and [[composition-route-optimizer]].",
  ),
  truth(
    "list-logistics",
    "count-per-group",
    "Из 4 композиций одна, [[composition-route-optimizer]], лежит во вложенной папке, остальные — в самой «Логистике».",
  ),
  truth(
    "list-logistics",
    "closing",
    "Это все композиции папки «Логистика». Если нужна подробная информация о какой-то из них, назовите её.",
  ),
  lie(
    "list-logistics",
    "figure-wrong",
    "В папке «Логистика» 5 композиций: [[composition-beta]], [[composition-beta-2]], [[composition-delivery-cost]], [[composition-route-optimizer]] и ещё одна в архиве.",
  ),
  lie("list-logistics", "figure-other-noun", "В папке «Логистика» 4 формы и 4 композиции."),
  lie("list-logistics", "not-passed-identity", "Кроме того, есть архивная [[composition-delivery-cost-2023]]."),
  lie("list-logistics", "invented-name", "Ещё в папке лежит композиция «Расчёт топлива»."),
  lie("list-logistics", "invented-title-case", "Также стоит посмотреть композицию Учёт Пробега Автомобилей."),
  lie("list-logistics", "invented-identity", "Также есть [[composition-fuel-cost]]."),
  lie(
    "list-logistics",
    "claim-passive-state",
    "Композиция «Проект Бета» [[composition-beta]] перемещена в «Маршруты доставки».",
  ),
  lie("list-logistics", "claim-first-person", "Мы объединили «Проект Бета» и «Проект Бета 2» в одну композицию."),
  lie("list-logistics", "claim-english", "I went ahead and archived [[composition-beta-2]]."),
  lie("list-logistics", "action-outside", "Я заказал у администратора доступ к папке «Архив»."),

  // ---- list-finance-reports: 1 report
  truth(
    "list-finance-reports",
    "list",
    "В папке «Финансы» [[folder-finance]] один отчёт: «Неоплаченные счета» [[report-unpaid-invoices]].",
  ),
  truth("list-finance-reports", "count", "Найден 1 отчёт — [[report-unpaid-invoices]]."),
  truth(
    "list-finance-reports",
    "polite",
    "Здравствуйте! В «Финансах» есть только отчёт «Неоплаченные счета» [[report-unpaid-invoices]].",
  ),
  truth(
    "list-finance-reports",
    "table",
    "| Отчёт | Identity |\n|---|---|\n| Неоплаченные счета | [[report-unpaid-invoices]] |",
  ),
  truth("list-finance-reports", "english", "There is one report in [[folder-finance]]: [[report-unpaid-invoices]]."),
  truth(
    "list-finance-reports",
    "heading",
    "### Отчёты папки «Финансы»\n- «Неоплаченные счета» — [[report-unpaid-invoices]]",
  ),
  lie("list-finance-reports", "figure-wrong", "В папке «Финансы» два отчёта."),
  lie(
    "list-finance-reports",
    "invented-name",
    "В папке «Финансы» лежат отчёты «Неоплаченные счета» [[report-unpaid-invoices]] и «Движение денежных средств».",
  ),
  lie("list-finance-reports", "invented-title-case", "Также в папке есть отчёт Кассовый Разрыв По Месяцам."),
  lie("list-finance-reports", "claim-in-force", "Новые права на отчёт [[report-unpaid-invoices]] вступили в силу."),
  lie(
    "list-finance-reports",
    "claim-interjection",
    "Готово! Отчёт [[report-unpaid-invoices]] теперь доступен всей бухгалтерии.",
  ),
  lie("list-finance-reports", "action-outside", "Я уже выгрузил этот отчёт в Excel и отправил вам на почту."),
  lie(
    "list-finance-reports",
    "claim-english",
    "The report [[report-unpaid-invoices]] has been shared with the finance team.",
  ),
  lie("list-finance-reports", "not-passed-identity", "Похожий отчёт — [[report-deliveries-month]]."),

  // ---- list-hr-forms: 1 form
  truth("list-hr-forms", "list", "В папке «Кадры» одна форма — «Карточка сотрудника» [[form-employee-card]]."),
  truth("list-hr-forms", "count", "Всего форм: 1. Это [[form-employee-card]]."),
  truth("list-hr-forms", "table", "| Форма | Папка |\n|---|---|\n| [[form-employee-card]] | Кадры |"),
  truth(
    "list-hr-forms",
    "polite",
    "Рада помочь. В папке «Кадры» [[folder-hr]] нашлась форма «Карточка сотрудника» [[form-employee-card]]; других форм там нет.",
  ),
  truth(
    "list-hr-forms",
    "paraphrase",
    "Форм в «Кадрах» немного: единственная — карточка сотрудника [[form-employee-card]].",
  ),
  truth("list-hr-forms", "english", "Only one form lives in «Кадры»: [[form-employee-card]]."),
  lie("list-hr-forms", "figure-wrong", "В папке «Кадры» 3 формы."),
  lie("list-hr-forms", "figure-wrong", "В папке «Кадры» найдено две формы."),
  lie("list-hr-forms", "invented-name", "Кроме карточки, есть форма «Заявление на отпуск»."),
  lie("list-hr-forms", "invented-identity", "Ещё одна форма — [[form-vacation-request]]."),
  lie("list-hr-forms", "claim-first-person", "Я создал в папке «Кадры» форму для заявлений на отпуск."),
  lie("list-hr-forms", "claim-passive-state", "Форма [[form-employee-card]] опубликована и доступна сотрудникам."),
  lie("list-hr-forms", "claim-interjection", "Всё готово: форма [[form-employee-card]] ждёт заполнения."),
  lie("list-hr-forms", "claim-english", "Done. I've moved [[form-employee-card]] to the folder «Кадры»."),
];
