// Stage 03 (deterministic part): clauses → tasks with dependsOn. The only semantic rule of v0.6.0
// is the folder scope: "композиции в папке «Продажи»" becomes find_entity(Folder) and a child task
// restricted to that folder (nested folders included).
import { splitClauses, tokenizeClause, type Token } from "./clause";
import { isIdentity, residualMention, takeFolderScope } from "./clause-names";
import {
  commandOf,
  DEMONSTRATIVES,
  looksPlural,
  PREVIOUS_RE,
  PRONOUNS,
  QUESTION_WORDS,
  typeOf,
  type CommandKind,
} from "./lexicon";
import type { Normalized } from "./normalize";
import { MAX_TASKS } from "./plan-validate";
import type { Intent, Plan, SourceMode, Task } from "./types";
import { isRefused, namesTargets, readsDocumentation, readsDomain } from "./intents";

export interface ParsedPlan {
  plan: Plan;
  /** 0..1; below PLANNER_CONFIDENCE the planner gate opens. */
  confidence: number;
  clauses: number;
  implicitIntent: boolean;
  historyReference: boolean;
  /** Clauses whose tasks depend on an earlier clause of the same message. */
  linkedTasks: boolean;
  /** Unquoted names with no command or type ("Бюджет продаж"): looked up in the domain before the planner gate. */
  bareNames: string[];
}

interface ClauseParse {
  intent: Intent;
  sourceMode: SourceMode;
  entityType?: string;
  mentions: string[];
  folderName?: string;
  historyRef?: string;
  implicit: boolean;
  confidence: number;
  /** Names (and the type noun) found in the clause whatever the intent (a clarification reply is read through these). */
  names: string[];
  nameType?: string;
  /** The type noun nearest before each quoted/identity mention («отчёт «А» и композицию «Б»»). */
  mentionTypes: Record<string, string>;
  /**
   * Per mention, in the order of `mentions`: every type noun written for it — one («отчёт «А»»), or
   * several coordinated ones sharing the name («форму и сущность «Отгрузка»»: both documents).
   */
  mentionTypeList: string[][];
  /** A mutation verb beside a supported command («найди X и удали её»): the mutation part is unsupported. */
  alsoMutation: boolean;
}

/** Words and marks that join coordinated nouns: «и», «или», «либо», «а также», a comma. */
const COORDINATORS = new Set(["и", "или", "либо", "а", "также", ","]);
const isCoordinator = (t: Token) => t.kind !== "quote" && COORDINATORS.has(t.f);

export function parseClause(text: string): ClauseParse {
  const tokens = tokenizeClause(text);
  const used = new Set<number>();
  let command: CommandKind | undefined;
  let mutation = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== "word") continue;
    const k = commandOf(t.f);
    if (!k || (t.f === "где" && i !== 0)) continue;
    command ??= k === "inspect" && tokens[i + 1]?.f === "список" ? "list" : k;
    if (k === "mutate") mutation = true;
    used.add(i);
    if (tokens[i + 1]?.f === "список") used.add(i + 1);
  }
  const alsoMutation = mutation && command !== "mutate";
  // "ещё раз", "один раз", "разок": a repetition, never a name
  tokens.forEach((t, i) => {
    if (t.kind === "word" && t.f === "раз" && ["еще", "один", "лишний", "последний"].includes(tokens[i - 1]?.f ?? ""))
      used.add(i);
  });

  // A mutation ("перенеси X в папку Y") names a destination, not a search scope.
  const folderName = command === "mutate" ? undefined : takeFolderScope(tokens, used, command);

  let entityType: string | undefined;
  let plural = false;
  const mentionTypes: Record<string, string> = {};
  let nearestType: string | undefined;
  // the coordinated type nouns since the last mention («форму и сущность»), and each mention's share
  let pendingTypes: string[] = [];
  let lastTypeAt = -1;
  const typesAt = new Map<number, string[]>();
  let typeWords = 0;
  let lastMentionAt = -1;
  let trailing: { at: number; types: string[] } | undefined;
  tokens.forEach((t, i) => {
    if (used.has(i)) return;
    if (t.kind === "quote" || (t.kind === "word" && isIdentity(t.raw))) {
      if (nearestType && !(t.raw in mentionTypes)) mentionTypes[t.raw] = nearestType;
      typesAt.set(i, [...pendingTypes]);
      lastMentionAt = i;
      trailing = undefined;
      return;
    }
    if (t.kind !== "word") return;
    const ty = typeOf(t.f);
    // "в какой папке она лежит" asks about an attribute, it does not name a folder target
    if (ty === "Folder" && ["какой", "какую", "каких"].includes(tokens[i - 1]?.f ?? "")) {
      used.add(i);
      return;
    }
    if (!ty) return;
    // «не отчёт, а форму …»: a negated type is the one the user does not mean
    if (tokens[i - 1]?.f === "не") {
      used.add(i);
      used.add(i - 1);
      return;
    }
    typeWords++;
    nearestType = ty;
    // «форму и сущность», «и форму, и сущность», «форму, а также сущность»: one name for several types
    const between = tokens.slice(lastTypeAt + 1, i);
    const coordinated = lastTypeAt >= 0 && between.length > 0 && between.every(isCoordinator);
    // «сущность «Отгрузка» и форму»: a type after the name, joined to it and naming nothing of its own
    const sinceMention = lastMentionAt >= 0 && lastMentionAt > lastTypeAt ? tokens.slice(lastMentionAt + 1, i) : [];
    if (sinceMention.length && sinceMention.every(isCoordinator)) trailing = { at: lastMentionAt, types: [ty] };
    else if (trailing && coordinated) trailing.types.push(ty);
    else trailing = undefined;
    if (coordinated) {
      for (let k = lastTypeAt + 1; k < i; k++) used.add(k);
      if (!pendingTypes.includes(ty)) pendingTypes.push(ty);
    } else pendingTypes = [ty];
    lastTypeAt = i;
    if (entityType === undefined) {
      entityType = ty;
      plural = looksPlural(t.f);
      used.add(i);
    } else if (!DEMONSTRATIVES.has(tokens[i - 1]?.f ?? "")) used.add(i);
  });
  // trailing types the clause ends with share the name before them
  if (trailing && typesAt.has(trailing.at)) {
    const list = typesAt.get(trailing.at)!;
    for (const ty of trailing.types) if (!list.includes(ty)) list.push(ty);
  }
  // One type for the whole clause needs no per-mention map.
  if (typeWords < 2) for (const k of Object.keys(mentionTypes)) delete mentionTypes[k];

  let historyRef: string | undefined;
  tokens.forEach((t, i) => {
    if (used.has(i) || t.kind !== "word") return;
    if (PRONOUNS[t.f] !== undefined || PREVIOUS_RE.test(t.f)) {
      historyRef ??= t.raw;
      used.add(i);
    } else if (DEMONSTRATIVES.has(t.f) && typeOf(tokens[i + 1]?.f ?? "")) {
      historyRef ??= `${t.raw} ${tokens[i + 1]!.raw}`;
      used.add(i);
    }
  });

  const quotes = tokens.filter((t, i) => t.kind === "quote" && !used.has(i)).map((t) => t.raw);
  const identities = tokens.filter((t, i) => t.kind === "word" && !used.has(i) && isIdentity(t.raw)).map((t) => t.raw);
  let mentions = [...quotes, ...identities];
  const mentionTypeList = [
    ...tokens.flatMap((t, i) => (t.kind === "quote" && !used.has(i) ? [typesAt.get(i) ?? []] : [])),
    ...tokens.flatMap((t, i) => (t.kind === "word" && !used.has(i) && isIdentity(t.raw) ? [typesAt.get(i) ?? []] : [])),
  ];
  if (mentions.length === 0) {
    const residual = residualMention(tokens, used);
    if (residual) {
      mentions = [residual];
      // an unquoted name after its type nouns: «найди форму или сущность Отгрузка»
      if (pendingTypes.length) mentionTypeList.push([...pendingTypes]);
    }
  }
  // «найди «Бюджет» и удали её»: the pronoun is the mutation's object, not a history reference
  if (alsoMutation && mentions.length) historyRef = undefined;
  const question = tokens.some((t) => t.kind === "word" && QUESTION_WORDS.has(t.f)) || text.trim().endsWith("?");
  const hasTarget = mentions.length > 0 || !!historyRef;
  const identityLike = identities.length > 0;
  const longResidual = quotes.length === 0 && !identityLike && (mentions[0]?.split(" ").length ?? 0) > 4;

  const base = {
    entityType,
    mentions,
    folderName,
    historyRef,
    names: mentions,
    mentionTypes,
    mentionTypeList,
    alsoMutation,
    ...(entityType ? { nameType: entityType } : {}),
  };
  const withType = (
    p: Omit<
      ClauseParse,
      | "entityType"
      | "mentions"
      | "folderName"
      | "historyRef"
      | "names"
      | "nameType"
      | "mentionTypes"
      | "mentionTypeList"
      | "alsoMutation"
    >,
  ): ClauseParse => ({ ...base, ...p });
  const docsOnly = (confidence: number, implicit: boolean): ClauseParse => ({
    intent: "explain_documentation",
    sourceMode: "documentation",
    mentions: [],
    implicit,
    confidence,
    names: mentions,
    mentionTypes,
    mentionTypeList,
    alsoMutation,
    ...(entityType ? { nameType: entityType } : {}),
  });

  switch (command) {
    case "mutate":
      return withType({ intent: "unsupported", sourceMode: "none", implicit: false, confidence: 0.95 });
    case "list":
      return withType({
        intent: "list_entities",
        sourceMode: "domain",
        implicit: false,
        confidence: entityType || folderName ? 0.95 : 0.6,
      });
    case "find":
      if (!mentions.length && !historyRef && (plural || folderName))
        return withType({ intent: "list_entities", sourceMode: "domain", implicit: false, confidence: 0.85 });
      return withType({
        intent: "find_entity",
        sourceMode: "domain",
        implicit: false,
        confidence: hasTarget ? (longResidual ? 0.55 : 0.95) : 0.4,
      });
    case "inspect":
      if (!mentions.length && !historyRef && (plural || folderName))
        return withType({ intent: "list_entities", sourceMode: "domain", implicit: false, confidence: 0.85 });
      return withType({
        intent: "inspect_entity",
        sourceMode: "domain",
        implicit: false,
        confidence: hasTarget ? (longResidual ? 0.55 : 0.95) : 0.4,
      });
    case "explain":
      // "объясни композицию «X»" is about a document (mixed); "объясни, как вызвать композицию"
      // is about the product. An unquoted name after a type noun is left to the planner gate.
      if (quotes.length || identityLike || historyRef)
        return withType({ intent: "inspect_entity", sourceMode: "mixed", implicit: false, confidence: 0.85 });
      return docsOnly(entityType && mentions.length && !question ? 0.6 : 0.9, false);
    default: {
      if (identityLike && !question)
        return withType({ intent: "inspect_entity", sourceMode: "domain", implicit: false, confidence: 0.9 });
      if (entityType && plural && !mentions.length && (question || folderName))
        return withType({ intent: "list_entities", sourceMode: "domain", implicit: true, confidence: 0.75 });
      if (historyRef)
        return withType({ intent: "inspect_entity", sourceMode: "conversation", implicit: true, confidence: 0.5 });
      if ((quotes.length || identityLike) && question)
        return withType({ intent: "inspect_entity", sourceMode: "mixed", implicit: true, confidence: 0.5 });
      if (question) return docsOnly(0.5, true);
      return docsOnly(0.3, true);
    }
  }
}

export const PLANNER_CONFIDENCE = 0.7;
/** Seed: a plan is small. Targets beyond this are not worked on; the answer says which (see `omittedMentions`). */
export const MAX_DETERMINISTIC_TASKS = MAX_TASKS;

/** The deterministic plan for a normalized request. */
export function deterministicPlan(norm: Normalized, planVersion = 1): ParsedPlan {
  const { clauses } = splitClauses(norm.text);
  const tasks: Task[] = [];
  let confidence = 1;
  let implicitIntent = false;
  let historyReference = false;
  let linkedTasks = false;
  const bareNames: string[] = [];
  let prevTarget: Task | undefined;
  const nextId = () => `task-${tasks.length + 1}`;

  for (const clause of clauses.length ? clauses : [norm.text]) {
    const p = parseClause(clause);
    if (readsDocumentation(p.intent) && p.implicit && p.names.length === 1 && !p.nameType) bareNames.push(p.names[0]!);
    confidence = Math.min(confidence, p.confidence);
    implicitIntent ||= p.implicit;
    let folderTask: Task | undefined;
    if (p.folderName) {
      folderTask = {
        id: nextId(),
        intent: "find_entity",
        sourceMode: "domain",
        entityType: "Folder",
        mentions: [p.folderName],
        dependsOn: [],
      };
      tasks.push(folderTask);
    }
    const task: Task = {
      id: nextId(),
      intent: p.intent,
      sourceMode: p.sourceMode,
      mentions: p.mentions,
      dependsOn: [],
    };
    if (p.entityType) task.entityType = p.entityType;
    if (folderTask) {
      task.dependsOn.push(folderTask.id);
      task.folderScope = folderTask.id;
    }
    if (p.historyRef && p.mentions.length === 0) {
      if (prevTarget) {
        // an antecedent in this very message: depend on it instead of on the conversation
        task.refersTo = prevTarget.id;
        task.dependsOn.push(prevTarget.id);
        task.mentions = [...prevTarget.mentions];
        task.entityType ??= prevTarget.entityType;
        if (task.sourceMode === "conversation") task.sourceMode = "domain";
        linkedTasks = true;
      } else {
        historyReference = true;
        task.sourceMode = isRefused(task.intent) ? "none" : "conversation";
        task.mentions = [p.historyRef];
      }
    } else if (p.historyRef) {
      historyReference ||= !prevTarget;
      // «…, потом покажи связанную с ней сущность «X»»: a back-reference links the clauses
      if (prevTarget) linkedTasks = true;
    }
    const typeLists = p.mentions.length === task.mentions.length ? p.mentionTypeList : [];
    const others = splitTargets(task);
    tasks.push(task);
    for (const part of others) tasks.push({ ...part, id: nextId() });
    // each target keeps the type noun written before it; a name given several types is one target per type
    const targets = [task, ...tasks.slice(tasks.length - others.length)];
    targets.forEach((t, k) => {
      const types = t.mentions.length ? (typeLists[k] ?? []) : [];
      if (types.length) t.entityType = types[0];
      if (!namesTargets(t.intent)) return;
      for (const ty of types.slice(1)) {
        const { id: _id, ...copy } = t;
        tasks.push({ ...copy, entityType: ty, mentions: [...t.mentions], dependsOn: [...t.dependsOn], id: nextId() });
      }
    });
    if (readsDomain(task.intent)) prevTarget = tasks.at(-1)!;
    if (p.alsoMutation) {
      // The supported part runs; the mutation is reported as not done (seed: no domain mutations here).
      const targets = tasks.slice(tasks.indexOf(task)).filter((t) => namesTargets(t.intent));
      const note: Task = {
        id: nextId(),
        intent: "unsupported",
        sourceMode: "none",
        mentions: targets.flatMap((t) => t.mentions),
        dependsOn: [],
      };
      if (targets[0]?.entityType) note.entityType = targets[0].entityType;
      tasks.push(note);
    }
  }
  // At most MAX_DETERMINISTIC_TASKS: whole targets are dropped from the end (with whatever depends on them).
  let omittedMentions: string[] = [];
  if (tasks.length > MAX_DETERMINISTIC_TASKS) {
    const kept = tasks.slice(0, MAX_DETERMINISTIC_TASKS);
    const dropped = tasks.slice(MAX_DETERMINISTIC_TASKS);
    // an unsupported note is worth keeping over one more target
    const note = dropped.find((t) => isRefused(t.intent));
    if (note && !kept.some((t) => isRefused(t.intent))) dropped.push(kept.splice(kept.length - 1, 1, note)[0]!);
    const keptIds = new Set(kept.map((t) => t.id));
    const valid = kept.filter((t) => t.dependsOn.every((d) => keptIds.has(d)));
    omittedMentions = [
      ...new Set(
        [...dropped, ...kept.filter((t) => !valid.includes(t))]
          .filter((t) => !isRefused(t.intent))
          .flatMap((t) => t.mentions),
      ),
    ];
    tasks.length = 0;
    tasks.push(...valid);
  }
  return {
    plan: { planVersion, plannedBy: "deterministic", tasks, ...(omittedMentions.length ? { omittedMentions } : {}) },
    confidence,
    clauses: Math.max(1, clauses.length),
    implicitIntent,
    historyReference,
    linkedTasks,
    bareNames,
  };
}

/**
 * "Покажи «А» и «Б»": one target per task, so each is resolved (and clarified) on its own. A
 * find/inspect task naming several targets keeps the first; the others are returned as copies
 * for the caller to give ids (the deterministic plan and the planner's output number them apart).
 */
export function splitTargets(task: Task): Omit<Task, "id">[] {
  if (!namesTargets(task.intent) || task.mentions.length < 2 || task.refersTo) return [];
  const [first, ...rest] = task.mentions;
  task.mentions = [first!];
  return rest.map((m) => {
    const { id: _id, ...copy } = task;
    return { ...copy, mentions: [m], dependsOn: [...task.dependsOn] };
  });
}
