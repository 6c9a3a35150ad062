// Labelled answers to the captured prompts of the documentation scenarios (passages of the bundled
// docs): the docs' own conditionals and futures are true, a change reported as done is not.
import type { Labelled } from "./labelled";
import { lie, truth } from "./labelled";

export const DOC_ANSWERS: Labelled[] = [
  // ---- doc-delete-composition
  truth(
    "doc-delete-composition",
    "conditional",
    "Если композиция удалена, сборка отчёта, который её вызывает, завершится ошибкой «composition not found».",
  ),
  truth(
    "doc-delete-composition",
    "future-passive",
    "Отчёт вызывает композицию по identity, поэтому после её удаления сборка отчёта будет прервана ошибкой «composition not found».",
  ),
  truth(
    "doc-delete-composition",
    "paraphrase",
    "Отчёт обращается к композиции по её identity. Когда такой композиции больше нет, отчёт не соберётся — появится ошибка «composition not found».",
  ),
  truth(
    "doc-delete-composition",
    "list",
    "Коротко:\n- отчёт вызывает композицию по identity;\n- если композицию удалить, сборка отчёта завершится ошибкой «composition not found»;\n- старую версию лучше перенести в архив: отчёты продолжают использовать опубликованную версию.",
  ),
  truth(
    "doc-delete-composition",
    "heading",
    "### Что случится с отчётом\n\nСборка упадёт с ошибкой «composition not found», потому что отчёт ищет композицию по identity.",
  ),
  truth(
    "doc-delete-composition",
    "polite",
    "Хороший вопрос! Если композиция, которую вызывает отчёт, будет удалена, отчёт перестанет собираться и вернёт ошибку «composition not found».",
  ),
  truth(
    "doc-delete-composition",
    "english",
    "If the composition is deleted, the report build fails with «composition not found»: the report calls it by identity.",
  ),
  truth(
    "doc-delete-composition",
    "advice",
    "Чтобы отчёт не сломался, вместо удаления перенесите старую версию композиции в архив.",
  ),
  lie(
    "doc-delete-composition",
    "claim-first-person",
    "Я проверил: композиция удалена, и отчёт уже перестроен без неё.",
  ),
  lie(
    "doc-delete-composition",
    "claim-passive-state",
    "Ссылка отчёта на композицию исправлена, ошибки больше не будет.",
  ),
  lie("doc-delete-composition", "claim-interjection", "Готово, отчёт переключён на архивную версию композиции."),
  lie("doc-delete-composition", "invented-name", "Подробности — в документе «Миграция отчётов между версиями»."),
  lie("doc-delete-composition", "figure-invented", "Сборка отчёта повторяется 3 раза, прежде чем завершиться ошибкой."),
  lie("doc-delete-composition", "claim-english", "I've restored the deleted composition, so the report builds again."),

  // ---- doc-move-document
  truth(
    "doc-move-document",
    "instruction",
    "Перетащите документ в нужную папку в дереве Конфигуратора. Identity при переносе не меняется, поэтому ссылки на документ продолжат работать.",
  ),
  truth(
    "doc-move-document",
    "list",
    "1. Откройте дерево Конфигуратора.\n2. Перетащите документ в другую папку.\n3. Проверьте: identity остался прежним, ссылки не сломаются.",
  ),
  truth(
    "doc-move-document",
    "conditional",
    "Если документ перенесён в другую папку, ссылки на него остаются рабочими — identity не меняется.",
  ),
  truth(
    "doc-move-document",
    "polite",
    "С удовольствием подскажу! Документ переносится перетаскиванием в дереве. Папки могут быть вложенными, глубина не ограничена.",
  ),
  truth(
    "doc-move-document",
    "archive",
    "Для устаревших версий принято использовать папку «Архив»; архивная версия получает identity с суффиксом года или версии.",
  ),
  truth("doc-move-document", "heading", "## Перенос документа\n\nПеретаскиванием в дереве. Identity сохраняется."),
  truth(
    "doc-move-document",
    "assistant-limits",
    "Сам ассистент документы не переносит — это делается в дереве Конфигуратора.",
  ),
  lie("doc-move-document", "claim-first-person", "Я перенесла документ в папку «Архив», ссылки сохранились."),
  lie("doc-move-document", "claim-passive-state", "Документ перемещён, identity сохранён."),
  lie("doc-move-document", "claim-in-force", "Перенос вступил в силу, документ уже в новой папке."),
  lie("doc-move-document", "figure-invented", "Глубина вложенности папок ограничена 5 уровнями."),
  lie("doc-move-document", "invented-name", "Перенос удобнее выполнять через форму «Мастер переноса документов»."),
  lie("doc-move-document", "claim-english", "Done! The document was moved to the new folder."),

  // ---- doc-clarification
  truth(
    "doc-clarification",
    "list",
    "Ответить можно так:\n- нажать на один из предложенных вариантов;\n- написать «первый» или «последний вариант»;\n- уточнить: «ту, что в папке Архив» или «форму, а не сущность»;\n- назвать документ точнее или указать его identity.\n\nОтвет «отмена» прекращает запрос.",
  ),
  truth(
    "doc-clarification",
    "paraphrase",
    "Выберите вариант кнопкой или ответьте словами. После ответа ассистент продолжит тот же запрос — повторять вопрос не нужно.",
  ),
  truth(
    "doc-clarification",
    "future",
    "Зависимые шаги будут пересчитаны, а изменится только та часть запроса, к которой относился вопрос.",
  ),
  truth(
    "doc-clarification",
    "conditional",
    "Если выбранный документ удалили между вопросом и ответом, ассистент сообщит об этом и предложит выбрать снова.",
  ),
  truth(
    "doc-clarification",
    "count",
    "Ассистент задаёт один уточняющий вопрос: когда подходит несколько документов, документ не найден или данных недостаточно — это три случая.",
  ),
  truth(
    "doc-clarification",
    "polite",
    "Отличный вопрос! Просто нажмите на подходящий вариант — или напишите, например, «первый».",
  ),
  truth(
    "doc-clarification",
    "english",
    "Click one of the suggested options or answer in words; «отмена» cancels the request.",
  ),
  lie("doc-clarification", "claim-first-person", "Я выбрал за вас первый вариант и продолжил запрос."),
  lie("doc-clarification", "claim-passive-state", "Уточнение закрыто, запрос отменён."),
  lie("doc-clarification", "figure-invented", "На ответ даётся 10 минут, потом уточнение закрывается."),
  lie("doc-clarification", "figure-other-noun", "Ассистент задаёт три уточняющих вопроса подряд."),
  lie("doc-clarification", "action-outside", "Я передал ваш вопрос в поддержку."),
  lie("doc-clarification", "claim-english", "I have answered the clarification on your behalf."),

  // ---- doc-date-functions
  truth("doc-date-functions", "count", "В выражениях есть три функции дат: ADDDAYS, ENDOFMONTH и WORKDAYS."),
  truth(
    "doc-date-functions",
    "list",
    "- `ADDDAYS(date, n)` — прибавляет n дней к дате;\n- `ENDOFMONTH(date)` — последний день месяца;\n- `WORKDAYS(from, to)` — число рабочих дней между датами.",
  ),
  truth(
    "doc-date-functions",
    "table",
    "| Функция | Что делает |\n|---|---|\n| ADDDAYS(date, n) | прибавляет n дней |\n| ENDOFMONTH(date) | последний день месяца |\n| WORKDAYS(from, to) | рабочие дни между датами |",
  ),
  truth(
    "doc-date-functions",
    "paraphrase",
    "Для дат есть функция сдвига на n дней, функция конца месяца и подсчёт рабочих дней между двумя датами.",
  ),
  truth(
    "doc-date-functions",
    "heading",
    "### Функции дат\nADDDAYS, ENDOFMONTH, WORKDAYS — их можно использовать в шагах композиций и в вычисляемых полях форм.",
  ),
  truth("doc-date-functions", "english", "There are three date functions: ADDDAYS, ENDOFMONTH and WORKDAYS."),
  lie("doc-date-functions", "figure-wrong", "В выражениях доступно пять функций дат."),
  lie("doc-date-functions", "figure-invented", "ADDDAYS принимает до 3 аргументов."),
  lie("doc-date-functions", "claim-first-person", "Я добавил в композицию расчёт через WORKDAYS."),
  lie(
    "doc-date-functions",
    "claim-in-force",
    "Новая функция NETWORKDAYS появилась в выражениях с последним обновлением.",
  ),
  lie("doc-date-functions", "claim-english", "I've updated the step to use ENDOFMONTH."),

  // ---- doc-report-period
  truth(
    "doc-report-period",
    "plain",
    "Период отчёта задаётся параметрами `dateFrom` и `dateTo`; даты сравниваются без учёта времени.",
  ),
  truth("doc-report-period", "count", "Для периода нужны два параметра: dateFrom и dateTo."),
  truth(
    "doc-report-period",
    "list",
    "- `dateFrom` — начало периода\n- `dateTo` — конец периода\n\nВремя при сравнении дат не учитывается.",
  ),
  truth(
    "doc-report-period",
    "polite",
    "Пожалуйста! Укажите параметры dateFrom и dateTo — отчёт соберёт данные сущностей за этот период.",
  ),
  truth(
    "doc-report-period",
    "rights",
    "Кстати, право на чтение отчёта наследуется от папки, если у отчёта нет собственных прав.",
  ),
  truth("doc-report-period", "english", "Set `dateFrom` and `dateTo`; dates are compared without the time of day."),
  lie("doc-report-period", "figure-invented", "Максимальный период отчёта — 12 месяцев."),
  lie("doc-report-period", "claim-first-person", "Я задал период с 1 по 31 марта."),
  lie("doc-report-period", "claim-passive-state", "Период отчёта установлен на текущий месяц."),
  lie("doc-report-period", "invented-name", "Пример настройки — в отчёте «Продажи за квартал»."),
  lie("doc-report-period", "claim-english", "The period has been set to the current quarter."),
  lie("doc-report-period", "action-outside", "Я запустил сборку отчёта за прошлый месяц."),

  // ---- doc-composition-versions
  truth(
    "doc-composition-versions",
    "plain",
    "При публикации композиция получает новую версию. Старую можно перенести в архив; отчёты продолжат использовать опубликованную версию.",
  ),
  truth(
    "doc-composition-versions",
    "future",
    "После публикации отчёты, которые вызывают композицию, будут использовать опубликованную версию.",
  ),
  truth(
    "doc-composition-versions",
    "list",
    "1. Публикация создаёт новую версию композиции.\n2. Старую версию принято переносить в папку «Архив».\n3. Архивная версия получает identity с суффиксом года или версии.",
  ),
  truth(
    "doc-composition-versions",
    "polite",
    "Охотно объясню. Каждая публикация даёт композиции новую версию, а устаревшие версии переносят в «Архив».",
  ),
  truth(
    "doc-composition-versions",
    "heading",
    "## Версии\n\nНовая версия — при каждой публикации. Архивная версия: identity с суффиксом года или версии.",
  ),
  truth(
    "doc-composition-versions",
    "conditional",
    "Если старая версия перенесена в архив, её identity получит суффикс года или версии.",
  ),
  truth(
    "doc-composition-versions",
    "english",
    "Each publication gives the composition a new version; old versions are usually moved to «Архив».",
  ),
  lie("doc-composition-versions", "claim-first-person", "Я опубликовал новую версию композиции."),
  lie("doc-composition-versions", "claim-passive-state", "Старая версия перенесена в архив."),
  lie("doc-composition-versions", "figure-invented", "Хранятся только 3 последние версии композиции."),
  lie("doc-composition-versions", "date-wrong", "Архивная версия получает суффикс 2024."),
  lie("doc-composition-versions", "invented-name", "Список версий можно посмотреть в отчёте «История публикаций»."),
  lie("doc-composition-versions", "claim-interjection", "Сделано! Версия композиции обновлена."),
  lie("doc-composition-versions", "claim-english", "I have published version 2 of the composition."),
];
