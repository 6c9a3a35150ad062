import { describe, expect, it } from "vitest";
import { defaultRegistry } from "../../../systems/clinic/registry";
import type { ClinicState } from "../../../systems/clinic/types";
import { createRunner } from "./runner";
import type { Reply } from "./runner";
import { stepTail } from "../../utils/clinic-api";

/**
 * The four worked examples of seed 003 ("Разобранные примеры"), replayed turn by turn through the
 * dialogue machine: router answer, branch answer(s), and the thread state after each reply.
 */

interface ReplayTurn {
  patient: string;
  router: string;
  branch: Reply[];
  state: Partial<ClinicState>;
  events?: string[];
  noEvents?: string[];
  reply?: string;
  calls?: { router: number; branch: number };
}

function replay(turns: ReplayTurn[]) {
  const run = createRunner(defaultRegistry());
  for (const [i, t] of turns.entries()) {
    const r = run.turn(t.patient, { router: [t.router], branch: t.branch });
    if (!r.ok) throw new Error(`turn ${i + 1} failed`);
    expect(r.state, `turn ${i + 1}: ${t.patient}`).toMatchObject(t.state);
    for (const e of t.events ?? []) expect(r.events, `turn ${i + 1}`).toContain(e);
    for (const e of t.noEvents ?? []) expect(r.events, `turn ${i + 1}`).not.toContain(e);
    if (t.reply !== undefined) expect(r.reply).toBe(t.reply);
    if (t.calls) expect(r.calls).toEqual(t.calls);
    expect(r.reply).not.toMatch(/STATE_JSON|INTENT_CHANGE/);
  }
  return run;
}

describe("seed 003 worked examples", () => {
  it("01 · basic booking to the ENT: intro → qualify → present → offer_time → book → close", () => {
    const run = replay([
      {
        patient: "Здравствуйте, хочу записаться к ЛОРу",
        router: "new_booking",
        branch: [`Здравствуйте! Как к вам обращаться?${stepTail("intro", { specialist: "ЛОР" })}`],
        state: {
          activeBranch: "new_booking",
          routerDecision: "new_booking",
          step: "intro",
          slots: { specialist: "ЛОР" },
          handoffCount: 0,
        },
        reply: "Здравствуйте! Как к вам обращаться?",
        calls: { router: 1, branch: 1 },
      },
      {
        patient: "Алексей",
        router: "new_booking",
        branch: [`Алексей, что вас беспокоит?${stepTail("qualify", { name: "Алексей" })}`],
        state: { step: "qualify", slots: { specialist: "ЛОР", name: "Алексей" } },
      },
      {
        patient: "Болит ухо третий день",
        router: "new_booking",
        branch: [
          `Вас примет оториноларинголог, приём 30 минут. Подходит?${stepTail("present", { reason: "боль в ухе" })}`,
        ],
        state: { step: "present", slots: { specialist: "ЛОР", name: "Алексей", reason: "боль в ухе" } },
      },
      {
        patient: "Да, подходит",
        router: "new_booking",
        branch: [`Когда вам удобно прийти?${stepTail("offer_time")}`],
        state: { step: "offer_time" },
      },
      {
        patient: "Завтра после пяти",
        router: "new_booking",
        branch: [`Есть окно завтра в 17:30. Записываю?${stepTail("book", { preferred_time: "завтра 17:30" })}`],
        state: {
          step: "book",
          slots: { specialist: "ЛОР", name: "Алексей", reason: "боль в ухе", preferred_time: "завтра 17:30" },
        },
      },
      {
        patient: "Да, записывайте",
        router: "new_booking",
        branch: [`Готово, ждём вас завтра в 17:30.${stepTail("close", { confirmed: true })}`],
        state: { step: "close", handoffCount: 0, softInsertionCount: 0, suspended: null, escalationReason: null },
        noEvents: ["handoff", "sticky", "soft_insertion", "transition_rejected"],
      },
    ]);
    expect(run.state.slots).toEqual({
      specialist: "ЛОР",
      name: "Алексей",
      reason: "боль в ухе",
      preferred_time: "завтра 17:30",
      confirmed: true,
    });
  });

  const bookingStart: ReplayTurn[] = [
    {
      patient: "Хочу записаться к терапевту",
      router: "new_booking",
      branch: [`Как к вам обращаться?${stepTail("intro", { specialist: "терапевт" })}`],
      state: { step: "intro" },
    },
    {
      patient: "Мария",
      router: "new_booking",
      branch: [`Мария, что беспокоит?${stepTail("qualify", { name: "Мария" })}`],
      state: { step: "qualify" },
    },
  ];

  it("02a · a price question mid-booking answered as a side question (sticky + soft insertion)", () => {
    replay([
      ...bookingStart,
      {
        patient: "А сколько стоит приём?",
        router: "price_question",
        branch: [`Первичный приём терапевта — 2500 рублей. Так что вас беспокоит?${stepTail("qualify", {}, true)}`],
        state: {
          activeBranch: "new_booking",
          routerDecision: "price_question",
          step: "qualify",
          slots: { specialist: "терапевт", name: "Мария" },
          handoffCount: 0,
          softInsertionCount: 1,
          suspended: null,
        },
        events: ["sticky", "soft_insertion"],
        noEvents: ["handoff"],
        calls: { router: 1, branch: 1 },
      },
      {
        patient: "Кашель неделю",
        router: "new_booking",
        branch: [`Вас примет терапевт. Подходит?${stepTail("present", { reason: "кашель" })}`],
        state: {
          step: "present",
          softInsertionCount: 0,
          slots: { specialist: "терапевт", name: "Мария", reason: "кашель" },
        },
      },
    ]);
  });

  it("02b · the same question as a branch switch, then back to the booking through the suspended scenario", () => {
    replay([
      ...bookingStart,
      {
        patient: "Подождите, а какие у вас цены на анализы?",
        router: "price_question",
        branch: ["[INTENT_CHANGE: price_question]", "Общий анализ крови — 600 рублей."],
        state: {
          activeBranch: "price_question",
          step: null,
          slots: {},
          handoffCount: 1,
          suspended: { intent: "new_booking", step: "qualify", slots: { specialist: "терапевт", name: "Мария" } },
        },
        events: ["sticky", "handoff"],
        reply: "Общий анализ крови — 600 рублей.",
        calls: { router: 1, branch: 2 },
      },
      {
        patient: "А биохимия?",
        router: "price_question",
        branch: ["Биохимия — от 1800 рублей."],
        state: { activeBranch: "price_question", handoffCount: 1 },
        noEvents: ["handoff"],
      },
      {
        patient: "Ладно, продолжаем запись",
        router: "new_booking",
        branch: [`Продолжим, Мария. Что вас беспокоит?${stepTail("qualify")}`],
        state: {
          activeBranch: "new_booking",
          step: "qualify",
          slots: { specialist: "терапевт", name: "Мария" },
          handoffCount: 0,
          suspended: null,
        },
        events: ["resumed"],
        noEvents: ["handoff"],
      },
    ]);
  });

  it("03 · a child's booking held at qualify by require_legal_rep until the representative's name and phone are given", () => {
    const run = replay([
      {
        patient: "Хочу записать сына к ЛОРу",
        router: "new_booking",
        branch: [`Как зовут ребёнка и сколько ему лет?${stepTail("qualify", { is_child: true, specialist: "ЛОР" })}`],
        state: { step: "qualify", slots: { is_child: true } },
      },
      {
        patient: "Миша, 7 лет, болит горло",
        router: "new_booking",
        branch: [`Подберу врача.${stepTail("present", { name: "Миша", reason: "боль в горле" })}`],
        state: { step: "qualify", slots: { is_child: true, specialist: "ЛОР", name: "Миша", reason: "боль в горле" } },
        events: ["guard_blocked:require_legal_rep"],
      },
      {
        patient: "Я мама, Ирина Петрова",
        router: "new_booking",
        branch: [`Спасибо. Телефон?${stepTail("present", { legal_rep_name: "Ирина Петрова" })}`],
        state: { step: "qualify" },
        events: ["guard_blocked:require_legal_rep"],
      },
      {
        patient: "+7 900 000-00-00",
        router: "new_booking",
        branch: [`Мишу примет детский ЛОР.${stepTail("present", { legal_rep_phone: "+7 900 000-00-00" })}`],
        state: { step: "present" },
        noEvents: ["guard_blocked:require_legal_rep"],
      },
    ]);
    expect(run.state.slots).toMatchObject({ legal_rep_name: "Ирина Петрова", legal_rep_phone: "+7 900 000-00-00" });
  });

  it("03 · the guard is inactive for an adult patient", () => {
    replay([
      {
        patient: "Запишите к ЛОРу",
        router: "new_booking",
        branch: [`Что беспокоит?${stepTail("qualify", { specialist: "ЛОР", name: "Олег" })}`],
        state: { step: "qualify" },
      },
      {
        patient: "Болит горло",
        router: "new_booking",
        branch: [`Вас примет ЛОР.${stepTail("present", { reason: "горло" })}`],
        state: { step: "present" },
        noEvents: ["guard_blocked:require_legal_rep"],
      },
    ]);
  });

  it("04 · short informational questions: one call to general_info, no step machine, no slots; then info → booking", () => {
    const run = replay([
      {
        patient: "Во сколько вы работаете?",
        router: "general_info",
        branch: ["С 8:00 до 21:00 ежедневно."],
        state: { activeBranch: "general_info", step: null, slots: {}, handoffCount: 0 },
        calls: { router: 1, branch: 1 },
      },
      {
        patient: "Какой адрес?",
        router: "general_info",
        branch: ["Лесная улица, 5."],
        state: { activeBranch: "general_info", handoffCount: 0 },
        noEvents: ["handoff"],
      },
      {
        patient: "Как добраться от метро?",
        router: "general_info",
        branch: ["5 минут пешком от «Белорусской»."],
        state: { activeBranch: "general_info", handoffCount: 0 },
      },
      {
        patient: "Вы делаете МРТ?",
        router: "general_info",
        branch: ["Нет, МРТ в нашей клинике не проводится."],
        state: { activeBranch: "general_info", step: null },
        reply: "Нет, МРТ в нашей клинике не проводится.",
      },
      {
        patient: "Тогда запишите меня к неврологу",
        router: "new_booking",
        branch: [`Как к вам обращаться?${stepTail("intro", { specialist: "невролог" })}`],
        state: {
          activeBranch: "new_booking",
          step: "intro",
          slots: { specialist: "невролог" },
          handoffCount: 1,
          suspended: null,
        },
        events: ["handoff"],
      },
    ]);
    expect(run.state.routerDecision).toBe("new_booking");
  });
});
