// Claimed changes decided by the grammar of the clause (issue 42): whatever the verb, a completed,
// real act reported by the speaker, a thing that changed, a passive state of an altering verb or an
// interjection of completion is a claim; the docs' conditionals and futures, instructions,
// negations, questions and descriptions are not.
import { describe, expect, it } from "vitest";
import { findClaimedChange } from "../../../systems/workbench/claims";

const claims: Record<string, string[]> = {
  "first person, any change or act": [
    "Я переставил поля местами.",
    "Мы внедрили новую формулу.",
    "Композицию я уже удалил, не волнуйтесь.",
    "Я написал администратору.",
    "Я пересобрал отчёт за прошлый месяц.",
  ],
  "the speaker left out": ["Всё, форму поправил.", "Сделал, как вы просили.", "Уже сохранила правки."],
  "a thing that changed": [
    "Настройки сохранились.",
    "Новая схема обновления вступила в силу.",
    "Форма стала двухколоночной.",
  ],
  "passive states": [
    "Отредактировано по вашему запросу.",
    "Изменения применены успешно!",
    "Ваш отчёт пересчитан.",
    "Раскладка переключена на вкладки.",
    "Заявка оформлена.",
    "Функция ADDMONTHS добавлена в выражения.",
    "Поле «Должность» сделано обязательным.",
  ],
  completion: ["Готово ✅", "Вуаля! Форма готова.", "Выполнено.", "Всё готово: форма ждёт заполнения."],
  English: [
    "I've gone ahead and deleted it.",
    "The changes have been applied.",
    "Your form is now updated.",
    "Done — the layout was switched to tabs.",
    "It's done.",
    "Everything is saved now.",
  ],
  misspelt: ["Я исправен документ, как вы просили.", "Только что удалал документ."],
};
const plain: Record<string, string[]> = {
  "the docs' conditionals and futures": [
    "Если форму удалить, отчёт перестанет собираться.",
    "Если композиция удалена, сборка отчёта завершится ошибкой.",
    "После публикации будет создана новая версия.",
    "Зависимые шаги будут пересчитаны.",
    "If you delete the composition, the report will fail.",
  ],
  "instructions and modals": [
    "Нажмите «Сохранить».",
    "Можно переименовать документ в дереве.",
    "Проверьте: identity остался прежним.",
  ],
  "negations and questions": ["Я не вносил изменений.", "Не удалось найти форму.", "Форма была изменена?"],
  descriptions: [
    "Форма создана на основе сущности «Отгрузка».",
    "Композиция создана для расчёта отпусков.",
    "Композиция рассчитана на грузы до 500 кг.",
    "Данные сгруппированы по месяцам.",
    "Identity не меняется при переносе.",
    "Архивная версия заменена в 2025 году.",
    "The form is linked to the entity.",
    "It is based on the entity.",
    "The report is updated every 24 hours.",
  ],
  "the assistant's own acts": [
    "Я посмотрел документацию: перенос выполняется перетаскиванием.",
    "Нашлось три композиции.",
    "I checked the documentation.",
  ],
};

describe("claimed changes by grammar", () => {
  for (const [kind, xs] of Object.entries(claims))
    it(`claims: ${kind}`, () => {
      for (const x of xs) expect(findClaimedChange(x), x).toBeDefined();
    });
  for (const [kind, xs] of Object.entries(plain))
    it(`not claims: ${kind}`, () => {
      for (const x of xs) expect(findClaimedChange(x), x).toBeUndefined();
    });
  it("a long sentence the passed context says is quoted, not reported; a short state it contains is not", () => {
    const context = "Если между вопросом и ответом выбранный документ удалили, ассистент сообщит об этом.";
    expect(
      findClaimedChange("Выбранный документ удалили между вопросом и ответом, ассистент сообщит об этом."),
    ).toBeDefined();
    expect(findClaimedChange("Поле удалено.", "Если поле удалено, форма не откроется.")).toBeDefined();
    expect(
      findClaimedChange(
        "Если между вопросом и ответом выбранный документ удалили, ассистент сообщит об этом.",
        context,
      ),
    ).toBeUndefined();
  });
});
