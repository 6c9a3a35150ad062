/** Fixed patient-facing texts of seed 003 (no model call produces them). */
export const LOOP_GUARD_REPLY = "Уточню детали с администратором клиники, свяжемся с вами в течение ближайшего часа";
export const MODEL_UNAVAILABLE_REPLY =
  "Извините, модель временно недоступна. Пожалуйста, повторите сообщение через минуту.";
/** Used when a branch answered with a service tail only and had nothing for the patient. */
export const EMPTY_REPLY_FALLBACK = "Извините, не расслышала. Повторите, пожалуйста.";
/** The emergency reply to an acute red flag (clinic/red-flags.ts): fixed, so no model can weaken it. */
export const EMERGENCY_REPLY =
  "Это может быть опасно для жизни. Пожалуйста, немедленно вызовите скорую помощь: 103 (или 112 с мобильного телефона). " +
  "Не ждите записи к врачу. Я уже передала ваш диалог администратору клиники.";
