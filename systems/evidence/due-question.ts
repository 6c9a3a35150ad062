// Whether the user's words ask for a due date («До какого числа нужно оплатить …?», «срок оплаты»,
// «когда истёк срок …»), read by stems in any inflection. Shared by the rules that read the question
// (the interpreter's intent, the plan that reads the payment terms) and by the claim that answers it.
const fold = (s: string) => s.toLowerCase().replace(/ё/g, "е");

/** A due date: a contract's payment term, never a document's own date. */
const DUE_DATE =
  /до\s+какого\s+(?:числа|срока|дня)|какого\s+числа|к\s+какому\s+(?:числу|сроку)|когда\s+(?:нужно|надо|следует|истек|наступ|был)|срок\p{L}*\s+(?:оплат|платеж|погашен)|крайн\p{L}+\s+срок/u;

export const asksDueDate = (text: string): boolean => DUE_DATE.test(fold(text));
