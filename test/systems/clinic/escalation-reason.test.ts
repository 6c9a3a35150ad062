import { describe, expect, it } from "vitest";
import { escalationReasonFromText } from "../../../systems/clinic/escalation-reason";
import { defaultRegistry } from "../../../systems/clinic/registry";
import { createRunner } from "./runner";

describe("escalation reason from the patient's words", () => {
  it("reads clear cues, most urgent first, and nothing from a plain message", () => {
    expect(escalationReasonFromText("Позовите оператора, пожалуйста")).toBe("explicit_request");
    expect(escalationReasonFromText("Мне нужна операция на носу, под наркозом?")).toBe("surgery");
    expect(escalationReasonFromText("У ребёнка кровотечение из носа, что делать, оператора дайте")).toBe("acute_pain");
    expect(escalationReasonFromText("Это безобразие, я буду писать жалобу")).toBe("angry");
    expect(escalationReasonFromText("Хочу записаться к лору")).toBeNull();
  });

  it("a hand-off chosen by the router gets a reason even when the branch names none", () => {
    const run = createRunner(defaultRegistry());
    const r = run.turn("Соедините с администратором", {
      router: ["escalate_human"],
      branch: ["Передаю ваш вопрос администратору клиники."],
    });
    expect(r.ok && r.state).toMatchObject({ activeBranch: "escalate_human", escalationReason: "explicit_request" });
    expect(r.ok && r.notes.join("\n")).toContain("inferred");
  });

  it("the reason the model names wins over the inferred one; no cue leaves it unknown", () => {
    const named = createRunner(defaultRegistry()).turn("Позовите оператора", {
      router: ["escalate_human"],
      branch: ['Передаю администратору.\nSTATE_JSON: {"escalation_reason": "angry"}'],
    });
    expect(named.ok && named.state.escalationReason).toBe("angry");
    const none = createRunner(defaultRegistry()).turn("Ну и ладно", {
      router: ["escalate_human"],
      branch: ["Передаю администратору."],
    });
    expect(none.ok && none.state).toMatchObject({ activeBranch: "escalate_human", escalationReason: null });
  });

  // A real model's router often hands off without a reason: plain Russian words carry it (the
  // patterns used `\w`/`\b`, which never match Cyrillic, and these all came out null).
  it.each([
    ["Позовите человека", "explicit_request"],
    ["Дайте живого человека, а не бота", "explicit_request"],
    ["У меня очень сильная боль", "acute_pain"],
    ["резкая боль в ухе уже второй день", "acute_pain"],
    ["Это ужасно, сколько можно ждать ответа", "angry"],
    ["Мне предстоит операция, нужна консультация", "surgery"],
  ])("a router hand-off without a reason: «%s» → %s", (text, reason) => {
    const r = createRunner(defaultRegistry()).turn(text, {
      router: ["escalate_human"],
      branch: ["Передаю ваш вопрос администратору клиники."],
    });
    expect(r.ok && r.state).toMatchObject({ activeBranch: "escalate_human", escalationReason: reason });
  });
});

// Issue 43: cues are read on word stems, so any case, number or gender form of a phrase counts.
describe("escalation cues in any word form", () => {
  it.each([
    "Хочу поговорить с живым человеком",
    "Соедините меня с живым сотрудником, пожалуйста",
    "Можно пообщаться с живыми людьми?",
    "Дайте поговорить с реальным человеком",
    "С настоящим человеком можно связаться?",
    "Переключите на администратора",
    "Нужен оператор",
    "Позовите живого человека",
    "Я не хочу переписываться с ботом, мне нужен живой человек",
  ])("«%s» → explicit_request", (text) => {
    expect(escalationReasonFromText(text)).toBe("explicit_request");
  });

  it.each(["Я живу рядом с клиникой", "Хочу записаться к лору на пятницу", "Сколько стоит приём терапевта?"])(
    "«%s» → no reason",
    (text) => {
      expect(escalationReasonFromText(text)).toBeNull();
    },
  );
});
