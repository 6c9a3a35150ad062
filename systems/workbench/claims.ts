// Claimed changes decided by the grammar of the clause (issue 42). This flow never changes the
// workspace nor acts outside it, so a clause that asserts a completed, real act — indicative, not
// negated, not inside a conditional, future, modal or question frame — is a lie, whatever the verb.
// The morphology (person, tense, aspect, voice, mood) comes from `az` (morph.ts); the rules:
//   • a past verb whose subject is the speaker («я обновил», «мы отправили», «я менял»), or a
//     perfective one with the speaker left out («Обновил поле.», «Уже сохранила правки.») — unless
//     it is one of the assistant's own acts (finding, checking, reading: what it really did);
//   • a perfective past verb whose subject is a thing — a document, a term, a change («изменения
//     вступили в силу», «форма стала обязательной», «всё сохранилось»): a description of a document
//     is in the present or a state, a completed past is an event;
//   • a short passive participle as a state («поле удалено», «заявка оформлена»): of a verb that
//     alters, removes or sends (and every «пере-» verb: doing again) always; of a verb of making
//     (создать, добавить) or any other verb only when it stands as a bare state or is addressed to the
//     user — «создана для расчёта», «связана с сущностью» describe the document;
//   • an interjection of completion («Готово!», «Всё готово», «Done.»);
//   • English: "I('ve|have) + past participle", "has been + pp", "was/were + pp", "It's done".
// A clause the passed context itself says (a quoted description) and a dated history («заменена в
// 2025 году») are not acts of this conversation.
import { readings, typoReadings, type Reading } from "./morph";

/** Verbs that alter, remove or send a thing: their passive state is a claim whatever stands around it. */
const ALTERING = new Set(
  (
    "изменить обновить удалить переименовать исправить отредактировать поменять внести убрать сохранить применить " +
    "заменить перенести переместить опубликовать откатить восстановить отправить модифицировать скорректировать " +
    "перезаписать переписать стереть очистить архивировать заархивировать скопировать переделать поправить " +
    "подтвердить отменить откорректировать перестроить пересчитать установить включить выключить отключить " +
    "назначить активировать деактивировать запустить остановить загрузить выгрузить импортировать экспортировать закрыть"
  ).split(" "),
);
/** Verbs of making: «создана для …», «добавлены поля» describe a document; alone they report an act. */
const MAKING = new Set("создать добавить дополнить настроить сделать выполнить оформить завершить".split(" "));
/** What the assistant really does in a turn: reading, finding, checking, listing — not a change. */
const OWN_ACTS = new Set(
  (
    "найти найтись проверить посмотреть просмотреть изучить прочитать прочесть проанализировать сравнить " +
    "собрать подготовить составить понять увидеть заметить уточнить ознакомиться перечислить привести " +
    "выделить учесть обнаружить свести подсчитать посчитать описать объяснить сформулировать " +
    "поискать выбрать сгруппировать указать остановиться разобраться получить получиться оказаться остаться"
  ).split(" "),
);
/** Words that open a frame in which a change is not asserted (condition, time, purpose, question). */
const FRAMES = new Set(
  "если когда пока чтобы ли бы коли раз едва после при случае условии иначе пусть будто словно".split(" "),
);
/** Modal words: «можно удалить», «может быть удалена», «должна быть сохранена». */
const MODALS = new Set(
  "можно нужно надо следует необходимо должен должна должно должны может могут можете могу нельзя стоит".split(" "),
);
/** Complements after a participle that make it a description of the document, not an event. */
const DESCRIPTIVE_PREPS = new Set("для с со к ко по на из от между под над через ниже выше далее как".split(" "));
/** Adverbs that present an act as just done for the user. */
const ACT_ADVERBS = new Set("успешно только уже теперь сейчас наконец полностью готово".split(" "));
const HISTORY_RE =
  /(?:(?:^|[^\p{N}])(?:19|20)\d{2}(?!\p{N})|\d{1,2}\.\d{1,2}\.\d{2,4}|ранее|когда-то|в прошлом|давно|изначально|в версии|исторически|автором|в истории)/iu;

interface Word {
  w: string;
  r: Reading | undefined;
  all: Reading[];
  /** Readings of the word as a predicate: a past indicative verb or a short passive participle. */
  preds: Reading[];
}

const has = (r: Reading | undefined, ...tags: string[]) => !!r && tags.every((t) => r.tags.has(t));
const isPredicate = (r: Reading) =>
  (r.pos === "VERB" && r.tags.has("past") && r.tags.has("indc")) || (r.pos === "PRTS" && r.tags.has("pssv"));
/** A verb's stem without its infinitive suffix: what a guessed lemma («изменать») shares with the real one. */
const verbStem = (lemma: string) => lemma.replace(/(?:ать|ять|ить|еть|ыть|оть|уть|ти|чь)(?:ся|сь)?$/u, "");
const CHANGE = new Set([...ALTERING, ...MAKING]);
const CHANGE_BY_STEM = new Map([...CHANGE].map((l) => [verbStem(l), l]));
const CHANGE_PREFIXES = new Set([...CHANGE].map((l) => l.slice(0, 4)));

/** «пере-» makes a verb of doing again, differently: переключить, перестроить, перевести — a change. */
const redone = (lemma: string) => lemma.startsWith("пере") && !OWN_ACTS.has(lemma);
const isChange = (lemma: string) => CHANGE.has(lemma) || redone(lemma);

/** A guessed (not dictionary) reading takes the lemma of the change verb it was formed from. */
const canonical = (r: Reading): Reading =>
  r.known ? r : { ...r, lemma: CHANGE_BY_STEM.get(verbStem(r.lemma)) ?? r.lemma };

function predicatesOf(w: string, all: Reading[]): Reading[] {
  const known = all.filter((r) => r.known);
  const best = known[0]?.score ?? 0;
  // a dictionary word: its likely predicate readings («стали» the verb, not «сталь» the noun, when close)
  const fromDict = known.filter((r) => isPredicate(r) && r.score >= best * 0.25);
  if (fromDict.length) return fromDict;
  // a word the dictionary lacks: every guess from its ending, named after the change verb it resembles
  const guessed = known.length ? [] : all.filter(isPredicate).map(canonical);
  if (guessed.some((r) => CHANGE.has(r.lemma))) return guessed;
  // a misspelt change verb is still a change verb («исправен документ» for «исправлен»)
  if (CHANGE_PREFIXES.has(w.slice(0, 4))) {
    const typo = typoReadings(w).filter((r) => isPredicate(r) && CHANGE.has(r.lemma));
    if (typo.length) return typo;
  }
  return guessed;
}

function wordsOf(clause: string): Word[] {
  return (clause.match(/[\p{L}]+(?:-[\p{L}]+)*/gu) ?? [])
    .filter((w) => /[а-яё]/iu.test(w))
    .map((raw) => {
      const all = readings(raw);
      const w = raw.toLowerCase().replace(/ё/g, "е");
      return { w, r: all[0], all, preds: predicatesOf(w, all) };
    });
}

/** The part of a sentence before its subordinate clauses close: split on punctuation, keep frames per piece. */
function clausesOf(sentence: string): string[] {
  return (
    sentence
      // quoted text is read too (a claim in quotes is still shown to the user); code and citations are not words
      .replace(/`[^`]*`|\[\[[^\]]*\]\]/g, " ")
      .replace(/[«»„“”"]/g, " ")
      .split(/[,;:()|—–]|\s-\s/u)
      .map((c) => c.trim())
      .filter(Boolean)
  );
}

/** Why a predicate at index i is not asserted, if it is not. */
function framed(ws: Word[], i: number): boolean {
  for (let j = 0; j < i; j++) {
    const w = ws[j]!.w;
    if (FRAMES.has(w) || MODALS.has(w) || w === "котор" || w.startsWith("котор")) return true;
    // «будет удалена», «будут обновлены»: the future passive
    if (has(ws[j]!.r, "VERB", "futr") && ws[j]!.r!.lemma === "быть") return true;
  }
  // negation right before the predicate or its auxiliary («не было удалено», «ничего не изменено»)
  for (let j = Math.max(0, i - 3); j < i; j++) if (ws[j]!.w === "не" || ws[j]!.w === "ни") return true;
  return false;
}

/** Number and gender of a past form or a short participle agree with its subject's. */
function agrees(noun: Reading, pred: Reading | undefined): boolean {
  if (!pred) return true;
  if (pred.tags.has("plur")) return noun.tags.has("plur");
  if (noun.tags.has("plur")) return false;
  const gender = ["masc", "femn", "neut"].find((g) => pred.tags.has(g));
  return !gender || noun.tags.has(gender) || noun.tags.has("Ms-f") || noun.pos === "NPRO";
}

type Subject = "speaker" | "thing" | "person" | "none";

/**
 * Who the predicate at i is about: the speaker («я», «мы»), a thing (a document, a change, a term —
 * an inanimate noun), a person other than the speaker, or nobody named (the speaker left out).
 */
function subjectOf(ws: Word[], i: number, pred?: Reading): Subject {
  let found: Subject = "none";
  for (let j = 0; j < ws.length; j++) {
    if (j === i) continue;
    const r = ws[j]!.r;
    if (!r) continue;
    if (r.pos === "NPRO" && r.tags.has("1per") && r.tags.has("nomn")) return "speaker";
    if ((ws[j]!.w === "все" || ws[j]!.w === "всё") && found === "none") found = "thing";
    // a noun by its likely reading («в» is a preposition, not the abbreviation of «век»)
    if (r.pos !== "NOUN" && r.pos !== "NPRO") continue;
    const nomn = ws[j]!.all.find((x) => x.pos === r.pos && x.tags.has("nomn") && agrees(x, pred));
    if (!nomn || found !== "none") continue;
    found = nomn.tags.has("anim") || (nomn.pos === "NPRO" && !nomn.tags.has("neut")) ? "person" : "thing";
  }
  return found;
}

/** The claim in one clause of Russian text, if any. */
function russianClaim(clause: string, sentence: string): string | undefined {
  const ws = wordsOf(clause);
  if (!ws.length) return undefined;
  // «Готово!», «Всё готово», «Сделано» — completion as the whole clause
  const ready = ws.findIndex((x) => has(x.r, "ADJS") && x.r!.lemma === "готовый");
  if (ready >= 0 && ws.length <= 2 && !framed(ws, ready)) return ws[ready]!.w;
  for (let i = 0; i < ws.length; i++) {
    const { w, preds } = ws[i]!;
    if (!preds.length || framed(ws, i)) continue;
    const verb = preds.find((r) => r.pos === "VERB" && !OWN_ACTS.has(r.lemma) && r.lemma !== "быть");
    if (verb) {
      const subject = subjectOf(ws, i, verb);
      // the speaker never acts in this flow: any past act of theirs is a claim («я отправил», «мы меняли»)
      if (subject === "speaker") return w;
      // a thing that changed — a document, a term, a change itself («изменения вступили в силу», «форма
      // стала другой»): descriptions of a document use the present or a state, a completed past is an
      // event — or no subject at all: the speaker left out («Обновил поле.», «Уже сохранила правки.»)
      // (the left-out speaker is a he, a she or a we: a neuter past with no subject is «начало периода», not an act)
      if (subject === "none" && verb.tags.has("neut")) continue;
      if (subject !== "person" && (verb.tags.has("perf") || isChange(verb.lemma))) return w;
      continue;
    }
    const prts = preds.find((r) => r.pos === "PRTS" && !OWN_ACTS.has(r.lemma));
    if (!prts) continue;
    if (ALTERING.has(prts.lemma) || redone(prts.lemma)) return w;
    const after = ws.slice(i + 1);
    const addressed =
      ws.some((x) => ACT_ADVERBS.has(x.w)) || /для (?:вас|тебя)|по вашей|как вы (?:просили|хотели)/iu.test(sentence);
    if (addressed || subjectOf(ws, i) === "speaker") return w;
    // a verb of making states what was made unless a complement says what the thing is for or bound
    // to («создана для расчёта», «настроена на сущность»): «добавлена в выражения», «сделано
    // обязательным» report the making
    if (MAKING.has(prts.lemma) && after.length && !after.some((x) => DESCRIPTIVE_PREPS.has(x.w))) {
      if (!ws.slice(0, i).some((x) => x.w === "в" || x.w === "во")) return w;
    }
    const complement =
      after.some((x) => DESCRIPTIVE_PREPS.has(x.w)) || ws.slice(0, i).some((x) => x.w === "в" || x.w === "во");
    // a bare state: «Заявка оформлена.», «Поле добавлено.»
    if (!complement && after.length === 0 && (isChange(prts.lemma) || i <= 2)) return w;
  }
  return undefined;
}

// ---- English ----
const PP_IRREGULAR = "made|done|sent|written|rewritten|set|put|built|taken|run|given|drawn|shown";
const EN_OWN =
  /^(?:found|checked|looked|reviewed|searched|listed|read|compared|noticed|seen|saw|summari[sz]ed|gathered|collected|identified|outlined|included|prepared|understood|explained|described|shown|given)$/i;
const EN_FRAME =
  /\b(?:if|when|whenever|once|after|unless|until|will|would|can|could|should|may|might|must|to be|not|n['’]t|never|no)\b/i;
const EN_DONE = /^\s*(?:done|all done|all set|finished|completed|complete)\s*(?:[.!:,—–-]|$)/i;
const EN_FIRST = new RegExp(
  `\\b(?:I|we)(?:['’]ve|\\s+have|\\s+had|['’]d)?(?:\\s+(?:just|already|now|successfully|also|went\\s+ahead\\s+and|gone\\s+ahead\\s+and|[a-z]+ly))*\\s+([a-z]+ed|${PP_IRREGULAR})\\b`,
  "i",
);
const EN_PERFECT = new RegExp(
  `\\b(?:has|have)\\s+(?:now\\s+|just\\s+|already\\s+|successfully\\s+)?been\\s+([a-z]+ed|${PP_IRREGULAR})\\b`,
  "i",
);
const EN_PAST_PASSIVE = new RegExp(
  `\\b(?:was|were|is\\s+now|are\\s+now|got)\\s+(?:successfully\\s+|just\\s+|already\\s+)?([a-z]+ed|${PP_IRREGULAR})\\b`,
  "i",
);

/** Completion as a state: "It's done.", "Everything is saved now.", "All set." */
const EN_STATE = new RegExp(
  `\\b(?:it['’]s|it\\s+is|that['’]s|everything['’]s|everything\\s+is|all\\s+is)\\s+(?:now\\s+|all\\s+)?(?:done|complete|completed|finished|ready|set|saved|updated|fixed|applied)\\b|\\b(?:is|are)\\s+(?:[a-z]+ed|${PP_IRREGULAR})\\s+now\\b`,
  "i",
);

function englishClaim(sentence: string): string | undefined {
  if (EN_DONE.test(sentence)) return sentence.trim().split(/[\s.!:,]/)[0];
  const first = EN_FIRST.exec(sentence);
  if (first && !EN_OWN.test(first[1]!) && !EN_FRAME.test(sentence.slice(0, first.index + first[0].length)))
    return first[0].trim();
  const state = EN_STATE.exec(sentence);
  if (state && !EN_FRAME.test(sentence.slice(0, state.index))) return state[0].trim();
  for (const re of [EN_PERFECT, EN_PAST_PASSIVE]) {
    const m = re.exec(sentence);
    if (m && !EN_OWN.test(m[1]!) && !EN_FRAME.test(sentence.slice(0, m.index))) return m[0].trim();
  }
  return undefined;
}

/**
 * The first phrase of `text` that claims a change (or an act) this flow never makes, or undefined.
 * `context`: the passed context's text — a clause quoting it describes, it does not report.
 */
export function findClaimedChange(text: string, context?: string): string | undefined {
  const quoted = context ? norm(context) : "";
  for (const raw of text.split(/(?<=[.!?…])\s+|\n+/u)) {
    // a table row that states a consequence in the future is a situation, not an event
    // («| композиция удалена | сборка завершится ошибкой |»)
    if (/^\s*\|/.test(raw) && wordsOf(raw).some((x) => has(x.r, "VERB", "futr"))) continue;
    const sentence = raw.replace(/^[\s>#*_\-+|]+|\d+[.)]\s/gu, "").trim();
    if (!sentence || /\?\s*$/.test(sentence)) continue;
    // identities and code are not the sentence's language
    const prose = sentence.replace(/\[\[[^\]]*\]\]|`[^`]*`|[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+/gi, " ");
    const latin = (prose.match(/[a-z]/gi) ?? []).length;
    const cyr = (prose.match(/[а-яё]/giu) ?? []).length;
    if (latin > cyr) {
      const c = englishClaim(sentence);
      if (c && !(quoted && quoted.includes(norm(sentence)))) return c;
      continue;
    }
    const clauses = clausesOf(sentence);
    let speaker = false;
    for (let k = 0; k < clauses.length; k++) {
      const clause = clauses[k]!;
      // what follows an instruction is its content, not an assertion («Проверьте: identity остался прежним»)
      // — unless the speaker reports their own act in it («Обратите внимание: я обновил форму»)
      const instructed = k > 0 && wordsOf(clauses[k - 1]!).some((x) => has(x.r, "VERB", "impr"));
      if (instructed && !SPEAKER_RE.test(clause)) break;
      const claim = russianClaim(clause, sentence);
      if (/(?:^|[^\p{L}])(?:я|мы)(?![\p{L}])/iu.test(clause)) speaker = true;
      if (!claim) continue;
      // the context's own sentence repeated (a description quoted whole), not a short state it happens to contain
      if (quoted && norm(clause).split(" ").length >= 5 && quoted.includes(norm(clause))) continue;
      // a dated description is the document's history, not this conversation's act
      if (!speaker && !/(?:^|[^\p{L}])(?:я|мы)(?![\p{L}])/iu.test(clause) && HISTORY_RE.test(sentence)) continue;
      return claim;
    }
  }
  return undefined;
}

const SPEAKER_RE = /(?:^|[^\p{L}])(?:я|мы)(?![\p{L}])/iu;

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/ё/g, "е")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
