/**
 * The patient's contact after an escalation (issue 17 item 1): the reply asks for a phone, and a
 * phone in a later message is stored on the thread for the operator. Read by a pattern, not by a
 * model: a number is either there or not, and no model call is spent on it.
 */

/** Appended to the reply of the turn that hands the thread to a human, while no contact is known. */
export const CONTACT_REQUEST = "Оставьте, пожалуйста, номер телефона — администратор перезвонит вам.";
/** What a patient reads while an operator has the thread (no model call). */
export const HOLDING_REPLY = "Ваше сообщение передано администратору клиники, он ответит вам здесь в ближайшее время.";
export const CONTACT_SAVED = "Спасибо, номер записан — администратор перезвонит вам.";

/** A reply that already asks for a phone needs no second request. */
export const asksForContact = (reply: string) =>
  /(номер|ваш|оставьте|укажите|напишите)\s+(\S+\s+)?телефон|телефон для связи|контакт/i.test(reply);

/**
 * A phone number in the patient's words, normalized: Russian numbers (+7 / 8 and ten digits, any
 * spaces, dashes or brackets) become +7XXXXXXXXXX; another number written with "+" and 10–15 digits
 * is kept as +digits. Null when there is none.
 */
export function phoneFromText(text: string): string | null {
  for (const m of text.matchAll(/(?:\+\s?\d|\b\d)[\d\s\-()]{8,20}\d/g)) {
    const raw = m[0];
    const digits = raw.replace(/\D/g, "");
    if (digits.length === 11 && (digits.startsWith("7") || digits.startsWith("8"))) return `+7${digits.slice(1)}`;
    if (digits.length === 10 && digits.startsWith("9") && !raw.trimStart().startsWith("+")) return `+7${digits}`;
    if (raw.trimStart().startsWith("+") && digits.length >= 10 && digits.length <= 15) return `+${digits}`;
  }
  return null;
}
