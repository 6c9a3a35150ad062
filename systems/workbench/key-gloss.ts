// What a unit-less content key counts (issue 42): `retries: 3` restated as «3 попытки» is the
// key's figure about its own meaning, «3 пользователя» is the same number about another thing. A
// key is English camelCase or snake_case; each of its words means what its gloss says — the gloss a
// passed text documents («`retries` — число повторных попыток»), else the project's bilingual
// lexicon of the words content keys are made of (documented in doc/workbench.md#answer-check). The
// answer's noun is compared by its dictionary form (lang/morph.ts, the `az` OpenCorpora
// dictionaries), so any inflection or number of it meets the gloss.
import { readings } from "./morph";

/** A key's words, singular and lower-case: maxRetryCount → max, retry, count; order_lines → order, line. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z\d])([A-Z])/g, "$1 $2")
    .replace(/[_\-.]+/g, " ")
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .map(singular);
}

/** An English noun's singular: retries → retry, boxes → box, points → point (a key's words are nouns). */
export function singular(w: string): string {
  if (/[^aeiou]ies$/.test(w)) return `${w.slice(0, -3)}y`;
  if (/(?:s|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (/[^su]s$/.test(w) && w.length > 3) return w.slice(0, -1);
  return w;
}

/**
 * The bilingual lexicon: an English word of a content key → the Russian nouns (dictionary forms,
 * ё written е) that name the same thing. Words of measure (days, kg) are units, not here
 * (figures.ts); qualifiers (max, min, count, number, total, limit) carry no meaning of their own.
 */
const LEXICON: Record<string, string[]> = {
  retry: ["попытка", "повтор", "перезапуск", "раз"],
  attempt: ["попытка", "раз"],
  try: ["попытка", "раз"],
  repeat: ["повтор", "повторение", "раз"],
  point: ["точка"],
  stop: ["остановка", "точка"],
  step: ["шаг", "этап"],
  stage: ["этап", "стадия", "шаг"],
  level: ["уровень"],
  approver: ["согласующий", "утверждающий", "согласователь"],
  approval: ["согласование", "утверждение"],
  user: ["пользователь"],
  employee: ["сотрудник", "работник"],
  member: ["участник", "член"],
  participant: ["участник"],
  item: ["позиция", "элемент", "пункт", "товар"],
  line: ["строка", "позиция"],
  row: ["строка"],
  column: ["колонка", "столбец"],
  field: ["поле"],
  page: ["страница"],
  file: ["файл"],
  attachment: ["вложение", "файл"],
  record: ["запись"],
  entry: ["запись"],
  document: ["документ"],
  order: ["заказ"],
  invoice: ["счет"],
  payment: ["платеж", "оплата"],
  reminder: ["напоминание"],
  notification: ["уведомление", "оповещение"],
  message: ["сообщение"],
  copy: ["копия", "экземпляр"],
  version: ["версия"],
  revision: ["ревизия", "редакция", "версия"],
  slot: ["слот", "место"],
  seat: ["место"],
  vehicle: ["машина", "автомобиль", "транспорт"],
  truck: ["грузовик", "машина"],
  driver: ["водитель"],
  carrier: ["перевозчик"],
  package: ["посылка", "пакет", "упаковка"],
  parcel: ["посылка"],
  box: ["коробка", "ящик"],
  pallet: ["паллета", "паллет", "поддон"],
  task: ["задача", "задание"],
  job: ["задание", "задача"],
  thread: ["поток"],
  worker: ["обработчик", "исполнитель"],
  connection: ["соединение", "подключение"],
  request: ["запрос", "заявка"],
  session: ["сессия", "сеанс"],
  report: ["отчет"],
  form: ["форма"],
  tab: ["вкладка"],
  option: ["вариант", "опция"],
  variant: ["вариант"],
  answer: ["ответ"],
  question: ["вопрос"],
  char: ["символ", "знак"],
  character: ["символ", "знак"],
  digit: ["цифра", "знак", "разряд"],
  decimal: ["знак", "разряд"],
  word: ["слово"],
  photo: ["фотография", "фото", "снимок"],
  image: ["изображение", "картинка"],
  comment: ["комментарий"],
  login: ["вход", "попытка"],
  warning: ["предупреждение"],
  error: ["ошибка"],
  account: ["счет"],
  address: ["адрес"],
  phone: ["телефон"],
  contact: ["контакт"],
  warehouse: ["склад"],
  shift: ["смена"],
};

/** The Russian nouns a text glosses a key with: the nouns of the clause that names it. */
function documented(key: string, text: string): string[] {
  const out: string[] = [];
  const name = key.toLowerCase();
  const named = new RegExp(`(?<![\\p{L}\\d_])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\p{L}\\d_])`, "u");
  if (!named.test(text.toLowerCase())) return out;
  for (const clause of text.split(/[.!?;\n]+/)) {
    const at = clause.toLowerCase().search(named);
    if (at < 0) continue;
    for (const w of clause.slice(at + name.length).match(/\p{Script=Cyrillic}+/gu) ?? [])
      for (const r of readings(w)) if (r.pos === "NOUN") out.push(r.lemma);
  }
  return out;
}

/**
 * The Russian nouns a content key means: a gloss a passed text documents, and the lexicon's glosses
 * of each of its words. Empty: nothing is known of the key's meaning in Russian.
 */
export function keyGlosses(key: string, documentation = ""): string[] {
  const own = documentation ? documented(key, documentation) : [];
  return [...new Set([...own, ...keyWords(key).flatMap((w) => LEXICON[w] ?? [])])];
}
