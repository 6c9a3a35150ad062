import { describe, expect, it } from "vitest";
import { acuteRedFlags } from "../../../systems/clinic/red-flags";

describe("acute red flags lexicon", () => {
  it.each([
    ["сильное кровотечение, не могу дышать", ["bleeding", "breathing"]],
    ["Кровь не останавливается", ["bleeding"]],
    ["обильное кровотечение после удаления зуба", ["bleeding"]],
    ["задыхаюсь", ["breathing"]],
    ["Нечем дышать!", ["breathing"]],
    ["болит в груди", ["chest_pain"]],
    ["жжёт за грудиной", ["chest_pain"]],
    ["кажется, инфаркт", ["chest_pain"]],
    ["Папа потерял сознание", ["consciousness"]],
    ["Она упала в обморок", ["consciousness"]],
    ["онемела половина лица", ["stroke"]],
    ["отёк Квинке", ["anaphylaxis"]],
    ["у сына эпилептический приступ", ["seizure"]],
    ["не хочу жить", ["suicide"]],
    ["невыносимая боль в животе", ["severe_pain"]],
    ["температура под 40 у ребёнка", ["severe_pain"]],
  ])("%s", (text, flags) => {
    expect(acuteRedFlags(text)).toEqual(flags);
  });

  it.each([
    "Сколько стоит приём?",
    "Хочу записаться к ЛОРу",
    "Не могу дышать носом, заложен",
    "Кровотечения нет",
    "Сознание не терял",
    "Боли в груди нет, просто кашель",
    "я не задыхаюсь",
    "Хочу сдать анализ крови",
    "Сильно хочу к хорошему врачу",
  ])("no flag: %s", (text) => {
    expect(acuteRedFlags(text)).toEqual([]);
  });
});
