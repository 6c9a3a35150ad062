import type { PromptMessage } from "./prompt";
import { escalationReasonFromText } from "./escalation-reason";
import type { BranchCode, Slots } from "./types";

/**
 * Deterministic stand-ins for the router and branch models, so that `npm start` without a model
 * gives a sensible clinic dialogue. They read only what the real models get: the messages.
 */

const lastUser = (messages: PromptMessage[]) => [...messages].reverse().find((m) => m.role === "user")?.content ?? "";

const ESCALATE =
  /оператор|живого|человек[ау]?(?!\p{L})|позовите|жалоб|безобраз|ужас|кровотеч|невыносим|очень сильн|не могу дышать|скорую|операци|наркоз|стационар/iu;
const RESCHEDULE = /перенес|перенос|отмен/i;
const PRICE = /сколько стоит|сколько будет|цен[аыу]|стоимост|прайс|руб/i;
const BOOKING =
  /запис|записать|на приём|на прием|к врачу|(?<!\p{L})к (лор|терапевт|кардиолог|невролог|окулист|хирург|педиатр|гинеколог|дерматолог)/iu;
const MEDICAL = /симптом|можно ли|лечени|таблетк|лекарств|подготов|противопоказ/i;
/** The booking branch's own questions: a reply to one of them continues the booking. */
const BOOKING_FLOW = /обращаться|что беспокоит|Подходит\?|удобно прийти|Подтверждаете|законного представителя/i;
const INFO = /адрес|где вы|часы|работаете|открыва|закрыва|парковк|добраться|проезд|делаете|есть ли у вас|услуг/i;

export function offlineRouter(messages: PromptMessage[]): BranchCode {
  const text = lastUser(messages);
  if (ESCALATE.test(text)) return "escalate_human";
  if (RESCHEDULE.test(text)) return "reschedule";
  if (PRICE.test(text)) return "price_question";
  if (BOOKING.test(text)) return "new_booking";
  if (MEDICAL.test(text)) return "medical_question";
  if (INFO.test(text)) return "general_info";
  // A short answer ("Алексей", "завтра") continues whatever the conversation is about.
  const history = messages
    .filter((m) => m.role !== "system")
    .map((m) => m.content)
    .join("\n");
  return BOOKING.test(history) || BOOKING_FLOW.test(history) ? "new_booking" : "general_info";
}

const SPECIALISTS: [RegExp, string][] = [
  [/лор|оторинолар|ухо|горл|нос(?!\p{L})/iu, "ЛОР"],
  [/терапевт/i, "терапевт"],
  [/кардиолог|сердц/i, "кардиолог"],
  [/невролог|спин/i, "невролог"],
  [/окулист|офтальмолог|глаз/i, "окулист"],
  [/хирург/i, "хирург"],
  [/педиатр/i, "педиатр"],
];
const YES = /^(да|ок|хорошо|подходит|давайте|записывайте|согласен|согласна|верно|конечно)/i;
const NO = /^(нет|не подходит|другое|неудобно)/i;
const PHONE = /\+?\d[\d\s()-]{6,}\d/;

function section(system: string, title: string): string | null {
  const i = system.indexOf(`[${title}`);
  if (i < 0) return null;
  const rest = system.slice(i);
  const end = rest.indexOf("\n\n");
  return end < 0 ? rest : rest.slice(0, end);
}

function readState(system: string): { branch: string; step: string | null; slots: Slots } {
  const block = section(system, "СОСТОЯНИЕ ДИАЛОГА") ?? "";
  const branch = /Ветка: (\S+)/.exec(block)?.[1] ?? "general_info";
  const step = /Шаг: (\S+)/.exec(block)?.[1] ?? null;
  let slots: Slots = {};
  try {
    slots = JSON.parse(/Слоты: (.*)/.exec(block)?.[1] ?? "{}") as Slots;
  } catch {
    /* keep empty */
  }
  return { branch, step, slots };
}

function knowledge(system: string): string | null {
  const block = section(system, "БАЗА ЗНАНИЙ");
  const first = block ? /\(1\) [^:]*: ([\s\S]*?)(?=\n\(\d+\)|$)/.exec(block)?.[1] : null;
  return first ? first.trim().slice(0, 400) : null;
}

const tail = (state_after: string, slots_updated: Slots = {}, soft = false) =>
  `\nSTATE_JSON: ${JSON.stringify({ state_after, slots_updated, ...(soft ? { soft_insertion: true } : {}) })}`;

function nameIn(text: string): string | null {
  const m = /(?:меня зовут|зовут|я\s*[-—–]?)\s+([А-ЯЁ][а-яё]+(?:\s+[А-ЯЁ][а-яё]+)?)/.exec(text);
  if (m) return m[1]!;
  const bare = text.trim().replace(/[.!]$/, "");
  return /^[А-ЯЁ][а-яё]+(\s+[А-ЯЁ][а-яё]+)?$/.test(bare) && !YES.test(bare) && !NO.test(bare) ? bare : null;
}

/** The offline stand-in names a reason every time: a clear cue, else the patient asked for a person. */
const escalationReason = (text: string): string => escalationReasonFromText(text) ?? "explicit_request";

function booking(step: string, slots: Slots, text: string): string {
  const spec = SPECIALISTS.find(([re]) => re.test(text))?.[1];
  const upd: Slots = {};
  if (spec && !slots.specialist) upd.specialist = spec;
  if (/сын|доч|ребён|ребен|малыш/i.test(text) && !slots.is_child) upd.is_child = true;
  const s = { ...slots, ...upd };
  switch (step) {
    case "intro": {
      const name = nameIn(text);
      if (!name && !s.is_child) return `Здравствуйте! Подскажите, как к вам обращаться?${tail("intro", upd)}`;
      if (name) upd.name = name;
      return `${name ? `${name}, р` : "Р"}асскажите, пожалуйста, что беспокоит?${tail("qualify", upd)}`;
    }
    case "qualify": {
      if (s.is_child) {
        const phone = PHONE.exec(text)?.[0];
        if (phone && !s.legal_rep_phone) upd.legal_rep_phone = phone;
        const rep = /([А-ЯЁ][а-яё]+\s+[А-ЯЁ][а-яё]+)/.exec(text.replace(PHONE, ""))?.[1];
        if (rep && phone && !s.legal_rep_name) upd.legal_rep_name = rep;
      }
      if (!s.reason && !upd.legal_rep_phone) upd.reason = text.slice(0, 200);
      const all = { ...s, ...upd };
      if (all.is_child && (!all.legal_rep_name || !all.legal_rep_phone))
        return `Для записи ребёнка нужны ФИО и телефон законного представителя. Напишите их, пожалуйста.${tail("qualify", upd)}`;
      if (!all.reason) return `Что вас беспокоит?${tail("qualify", upd)}`;
      return `Вас примет ${all.specialist ?? "профильный специалист"}, приём длится около 30 минут. Подходит?${tail("present", upd)}`;
    }
    case "present":
      if (NO.test(text)) return `Подскажите, к какому специалисту вы хотели бы попасть?${tail("present", upd)}`;
      return `Когда вам удобно прийти?${tail("offer_time", upd)}`;
    case "offer_time":
      return `Записываю вас${s.specialist ? ` к специалисту «${s.specialist}»` : ""} на «${text.slice(0, 60)}». Подтверждаете?${tail("book", { ...upd, preferred_time: text.slice(0, 60) })}`;
    case "book":
      if (NO.test(text)) return `Хорошо, давайте подберём другое время. Когда вам удобно?${tail("offer_time", upd)}`;
      if (YES.test(text))
        return `Готово, вы записаны: ${String(s.preferred_time ?? "")}. Ждём вас!${tail("close", { ...upd, confirmed: true })}`;
      return `Подтвердите, пожалуйста, запись: да или нет?${tail("book", upd)}`;
    default:
      return `Если появятся вопросы — пишите.${tail(step, upd)}`;
  }
}

const canned: Record<string, string> = {
  price_question: "Точную стоимость подскажет администратор; в базе знаний клиники этой цены нет.",
  general_info: "Уточню этот вопрос у администратора клиники — в базе знаний ответа нет.",
  medical_question: "Я не могу ставить диагнозы. Лучше обсудить это с врачом на очном приёме — хотите записаться?",
  reschedule: "Подскажите, пожалуйста, ваше ФИО, дату и время текущей записи и на когда хотите перенести.",
  escalate_human: "Передаю ваш вопрос администратору клиники, с вами свяжутся в течение ближайшего часа.",
};

export function offlineBranch(messages: PromptMessage[]): string {
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  const text = lastUser(messages);
  const { branch, step, slots } = readState(system);
  const hint = /Маршрутизатор счёл, что тема — `([A-Za-z0-9_]+)`/.exec(section(system, "ПОДСКАЗКА РОУТЕРА") ?? "")?.[1];
  const fact = knowledge(system);
  if (step !== null) {
    if (hint === "escalate_human") return `[INTENT_CHANGE: escalate_human|${escalationReason(text)}]`;
    if (hint === "reschedule") return "[INTENT_CHANGE: reschedule]";
    if (hint && hint !== "new_booking" && !nameIn(text)) {
      const question = /Вопрос шага: (.*)/.exec(system)?.[1] ?? "";
      return `${fact ?? canned[hint] ?? ""} ${question}`.trim() + tail(step, {}, true);
    }
    return booking(step, slots, text);
  }
  if (branch === "escalate_human" && system.includes('"escalation_reason"'))
    return `${canned.escalate_human}\nSTATE_JSON: ${JSON.stringify({ escalation_reason: escalationReason(text) })}`;
  return fact ?? canned[branch] ?? canned.general_info!;
}
