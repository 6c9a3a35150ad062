import type { StepGraph } from "./types";

/**
 * The booking step graph of seed 003 as configuration (version 1). The XState machine is generated
 * from this (machines/booking-steps.ts); nothing about these six steps is written anywhere else.
 */
export const seedBookingSteps: StepGraph = {
  branch: "new_booking",
  version: 1,
  initial: "intro",
  steps: [
    {
      code: "intro",
      title: "Приветствие",
      prompt:
        "Поприветствуй пациента и узнай, как к нему обращаться. Если он уже назвал специалиста или жалобу — запиши это в слоты.",
      question: "Подскажите, пожалуйста, как к вам обращаться?",
      allowed_next: ["intro", "qualify"],
      guards: {},
    },
    {
      code: "qualify",
      title: "Мини-интервью",
      prompt:
        "Коротко выясни повод обращения (слот reason) и к какому специалисту нужно (слот specialist). " +
        "Если записывают ребёнка — поставь is_child: true и узнай ФИО и телефон законного представителя (legal_rep_name, legal_rep_phone).",
      question: "Расскажите, пожалуйста, что вас беспокоит?",
      allowed_next: ["qualify", "present"],
      guards: {
        require_legal_rep: {
          description: "Для записи ребёнка нужны ФИО и телефон законного представителя",
          trigger_slot: "is_child",
          trigger_value: true,
          required_slots: ["legal_rep_name", "legal_rep_phone"],
        },
      },
    },
    {
      code: "present",
      title: "Предложение специалиста",
      prompt:
        "Предложи подходящего специалиста и формат приёма (длительность, что взять с собой). Спроси, подходит ли.",
      question: "Вам подходит этот специалист?",
      allowed_next: ["present", "offer_time"],
      guards: {},
    },
    {
      code: "offer_time",
      title: "Выбор времени",
      prompt: "Узнай удобные пациенту день и время и предложи ближайшее окно (слот preferred_time).",
      question: "Когда вам удобно прийти?",
      allowed_next: ["offer_time", "book"],
      guards: {},
    },
    {
      code: "book",
      title: "Запись",
      prompt:
        "Повтори детали записи (специалист, время) и попроси подтвердить. Подтверждение — слот confirmed: true. Если время не подошло — вернись к выбору времени.",
      question: "Записываю вас — подтверждаете?",
      allowed_next: ["book", "close", "offer_time"],
      guards: {},
    },
    {
      code: "close",
      title: "Подтверждение",
      prompt:
        "Запись подтверждена. Поблагодари пациента, напомни время и что взять с собой. Ответь на оставшиеся вопросы.",
      question: "Могу ли я ещё чем-то помочь?",
      allowed_next: ["close"],
      guards: {},
    },
  ],
};
