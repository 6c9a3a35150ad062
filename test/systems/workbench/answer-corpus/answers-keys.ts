// Unit-less content keys (issue 42's Workbench gap): `retries: 3` and `maxParallelTasks: 2` in a
// passed process whose description never says «попытка» or «задача». Written to the captured prompt
// of «Покажи композицию «Закрытие периода»» the way deepseek-chat and gpt-4o-mini restate such keys:
// with the noun the key means («3 попытки», «три повтора», «не больше двух задач», "3 retries") —
// true; the same number attached to a noun of another meaning, or another number about the key's
// noun — lies.
import type { Labelled } from "./labelled";
import { lie, truth } from "./labelled";

const S = "period-close";

export const KEY_ANSWERS: Labelled[] = [
  truth(
    S,
    "keys-prose",
    "Композиция [[composition-period-close]] закрывает период: сначала сверка остатков с контрагентами, затем формирование отчётности. Шаг, завершившийся ошибкой, запускается повторно — до 3 попыток.",
  ),
  truth(
    S,
    "keys-list",
    "Параметры композиции «Закрытие периода» ([[composition-period-close]]):\n- **Повторные попытки:** 3\n- **Параллельных задач:** не больше 2\n- **Напоминание:** через 5 дней",
  ),
  truth(
    S,
    "keys-words",
    "При ошибке шаг композиции [[composition-period-close]] запускается повторно, всего три повтора; одновременно выполняется не больше двух задач.",
  ),
  truth(
    S,
    "keys-table",
    "| Параметр | Значение |\n|---|---|\n| Повторы при ошибке | 3 попытки |\n| Параллельные задачи | 2 задачи |\n| Напоминание | 5 дней |\n\nИсточник: [[composition-period-close]].",
  ),
  truth(
    S,
    "keys-polite",
    "Конечно! Композиция [[composition-period-close]] состоит из двух шагов: сверка остатков и формирование отчётности. Если шаг завершился ошибкой, система делает до трёх попыток, а параллельно выполняет до двух задач.",
  ),
  truth(S, "keys-english", "[[composition-period-close]]: up to 3 retries per failed step, at most 2 parallel tasks."),
  truth(S, "keys-times", "Шаг композиции [[composition-period-close]] при ошибке повторяется до 3 раз."),
  lie(S, "figure-other-noun", "В композиции [[composition-period-close]] участвуют 3 пользователя."),
  lie(S, "figure-other-noun", "Композиция [[composition-period-close]] рассылает 3 напоминания сотрудникам."),
  lie(S, "figure-other-noun", "Одновременно композиция [[composition-period-close]] выполняет до 3 задач."),
  lie(S, "figure-other-noun", "Шаг композиции [[composition-period-close]] при ошибке повторяется до 2 раз."),
  lie(S, "figure-wrong-unit", "Композиция [[composition-period-close]] повторяет упавший шаг в течение 3 дней."),
  lie(S, "figure-wrong", "Композиция [[composition-period-close]] делает до 5 попыток при ошибке."),
  lie(S, "figure-other-noun", "Закрытие периода [[composition-period-close]] проверяет 3 склада."),
];
