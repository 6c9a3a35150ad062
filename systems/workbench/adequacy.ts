// Stage 09: Context Adequacy Gate. Decides, before any final model call, whether the prepared
// context can answer the plan. Failing reasons are codes; a clarifiable failure becomes one
// question about one slot of one task; unsupported work becomes a plain answer with no model call.
// Blocks are packed into a token budget — an exactly resolved target is pinned and never evicted.
import type { DocFragment } from "./docs";
import { TYPE_LABELS } from "./lexicon";
import type { ResolverIndex } from "./resolve-index";
import { isReference, type ResolveTasksResult } from "./resolve-tasks";
import { estimateTokens, fold } from "./text";
import type { Candidate, Plan, TaskResolution } from "./types";
import { isRefused, readsDocumentation } from "./intents";

export type ReasonCode =
  | "unsupported_task"
  | "unsupported_type"
  | "ambiguous_target"
  | "target_not_found"
  | "selection_disappeared"
  | "missing_relation"
  | "documentation_not_found"
  | "target_evicted";

export type ContextBlock =
  | {
      kind: "entity";
      taskId: string;
      identity: string;
      documentType: string;
      displayName: string;
      folder: { identity: string; displayName: string } | null;
      content: unknown;
      pinned: boolean;
      truncated: boolean;
      tokens: number;
    }
  | {
      kind: "list";
      taskId: string;
      entityType: string | null;
      folder: { identity: string; displayName: string } | null;
      items: Array<{ identity: string; displayName: string; documentType: string; folderIdentity: string | null }>;
      total: number;
      tokens: number;
    }
  | { kind: "doc"; docId: string; heading: string; text: string; tokens: number };

export interface ClarificationDraft {
  taskId: string;
  slot: "entity" | "folder" | "topic";
  question: string;
  candidates: Candidate[];
  reason: ReasonCode;
}

export interface AdequacyResult {
  passed: boolean;
  reasons: ReasonCode[];
  warnings: string[];
  blocks: ContextBlock[];
  evicted: Array<{ kind: string; ref: string }>;
  clarification?: ClarificationDraft;
  /** All work unsupported: answer this text without a model call. */
  plainAnswer?: string;
  /** Part of the work unsupported: said before the answer to the supported part. */
  notice?: string;
  tokens: number;
}

export interface AdequacyInput {
  plan: Plan;
  resolution: ResolveTasksResult | null;
  docs: DocFragment[] | null;
  index: ResolverIndex | null;
  budgetTokens?: number;
  entityContentTokens?: number;
}

const PINNED_BY = new Set(["exact", "clarification", "dependency"]);

export function adequacyGate(input: AdequacyInput): AdequacyResult {
  const budget = input.budgetTokens ?? 4000;
  const reasons = new Set<ReasonCode>();
  const warnings: string[] = [];
  let clarification: ClarificationDraft | undefined;
  const ask = (c: ClarificationDraft) => {
    clarification ??= c;
  };
  const unsupported: string[] = [];
  const res = new Map((input.resolution?.tasks ?? []).map((r) => [r.taskId, r]));

  for (const t of input.plan.tasks) {
    if (isRefused(t.intent)) {
      reasons.add("unsupported_task");
      unsupported.push(MUTATION_NOTE);
      continue;
    }
    if (readsDocumentation(t.intent)) {
      if (input.docs !== null && input.docs.length === 0) {
        reasons.add("documentation_not_found");
        ask({
          taskId: t.id,
          slot: "topic",
          reason: "documentation_not_found",
          candidates: [],
          question: "Не нашёл в документации ничего по этому вопросу. Уточните, пожалуйста, о чём именно идёт речь?",
        });
      }
      continue;
    }
    const blocked = input.resolution?.blocked.find((b) => b.taskId === t.id);
    if (blocked) {
      reasons.add("missing_relation");
      continue;
    }
    const r = res.get(t.id);
    if (!r) continue;
    const slot = isFolderSlot(input.plan, t.id) ? "folder" : "entity";
    switch (r.status) {
      case "unsupported_type":
        reasons.add("unsupported_type");
        unsupported.push(typeNote(t.entityType));
        break;
      case "ambiguous":
        reasons.add("ambiguous_target");
        ask({
          taskId: t.id,
          slot,
          reason: "ambiguous_target",
          candidates: toCandidates(r, input.index),
          question: whichQuestion(r),
        });
        break;
      case "not_found":
        if (r.lostSelection) {
          reasons.add("selection_disappeared");
          ask({
            taskId: t.id,
            slot,
            reason: "selection_disappeared",
            candidates: toCandidates(r, input.index),
            question: `Выбранного документа (${r.lostSelection}) больше нет в Workspace. Выберите другой вариант или уточните запрос.`,
          });
        } else {
          reasons.add("target_not_found");
          const question =
            t.sourceMode === "conversation" && isReference(r.mention)
              ? "О каком документе идёт речь? Назовите его или укажите identity."
              : notFoundQuestion(t.entityType, r);
          ask({ taskId: t.id, slot, reason: "target_not_found", candidates: toCandidates(r, input.index), question });
        }
        break;
      case "resolved":
        break;
    }
  }
  if (t0Mixed(input) && input.docs !== null && input.docs.length === 0) warnings.push("mixed_without_documentation");

  // ---- pack context blocks into the budget ----
  const { blocks, evicted, tokens } = packBlocks(input, budget, warnings);
  for (const e of evicted) {
    if (e.kind === "entity") {
      reasons.add("target_evicted");
      const r = res.get(e.taskId!);
      if (r)
        ask({
          taskId: r.taskId,
          slot: "entity",
          reason: "target_evicted",
          candidates: toCandidates(
            { ...r, candidates: r.candidates.filter((c) => c.identity === r.resolvedIdentity) },
            input.index,
          ),
          question: "Контекст запроса слишком велик. Подтвердите документ, о котором идёт речь, или сузьте вопрос.",
        });
    }
  }

  const failing = [...reasons];
  let plainAnswer: string | undefined;
  let notice: string | undefined;
  const supportedTasks = input.plan.tasks.filter(
    (t) => !isRefused(t.intent) && res.get(t.id)?.status !== "unsupported_type",
  );
  if (!clarification && unsupported.length) {
    const what = `Пока не поддерживается: ${[...new Set(unsupported)].join("; ")}.`;
    // A compound request keeps its supported half: the unsupported part becomes a notice before
    // the answer; only a request with nothing supported left is answered plainly.
    if (supportedTasks.length) notice = what;
    else
      plainAnswer = `${what} Я могу найти, показать или перечислить папки, композиции, сущности, формы и отчёты, а также объяснить документацию Endge.`;
  }
  const omitted = input.plan.omittedMentions ?? [];
  if (omitted.length) {
    const list =
      omitted
        .slice(0, 10)
        .map((m) => `«${m}»`)
        .join(", ") + (omitted.length > 10 ? ` и ещё ${omitted.length - 10}` : "");
    const note = `За один запрос я разбираю не больше ${input.plan.tasks.length} задач; не рассмотрены: ${list}. Спросите о них отдельным сообщением.`;
    if (plainAnswer) plainAnswer = `${plainAnswer} ${note}`;
    else notice = notice ? `${notice} ${note}` : note;
  }
  const blocking = notice ? failing.filter((r) => r !== "unsupported_task" && r !== "unsupported_type") : failing;
  return {
    passed: blocking.length === 0,
    reasons: failing,
    warnings,
    blocks,
    evicted: evicted.map((e) => ({ kind: e.kind, ref: e.ref })),
    ...(clarification ? { clarification } : {}),
    ...(plainAnswer ? { plainAnswer } : {}),
    ...(notice ? { notice } : {}),
    tokens,
  };
}

/** Seed 001: domain mutations are not part of this flow — said plainly, whatever the verb. */
export const MUTATION_NOTE =
  "изменение документов (создание, правка, переименование, перенос, удаление) — в этом чате изменения не вносятся, их нужно сделать в Конфигураторе";

function typeNote(entityType: string | undefined): string {
  const l = entityType ? TYPE_LABELS[entityType] : undefined;
  return l
    ? `${l.many} (тип ${entityType})`
    : entityType && /^[\p{L}\p{N}_-]{1,40}$/u.test(entityType)
      ? `документы типа ${entityType}`
      : "документы этого типа";
}

function t0Mixed(input: AdequacyInput): boolean {
  return input.plan.tasks.some((t) => t.sourceMode === "mixed");
}

function isFolderSlot(plan: Plan, taskId: string): boolean {
  return plan.tasks.some((t) => t.folderScope === taskId);
}

function toCandidates(r: TaskResolution, idx: ResolverIndex | null): Candidate[] {
  return r.candidates.map((c) => {
    const i = idx?.byIdentity.get(fold(c.identity));
    const doc = i !== undefined ? idx!.docs[i]!.doc : undefined;
    const folderIdentity = doc?.folderIdentity ?? null;
    const fi = folderIdentity ? idx?.byIdentity.get(fold(folderIdentity)) : undefined;
    const folderName = fi !== undefined ? idx!.docs[fi]!.doc.displayName : undefined;
    return {
      candidateId: c.candidateId,
      identity: c.identity,
      displayName: c.displayName,
      documentType: c.documentType,
      folderIdentity,
      ...(folderName ? { folderName } : {}),
    };
  });
}

function whichQuestion(r: TaskResolution): string {
  const types = new Set(r.candidates.map((c) => c.documentType));
  if (types.size === 1) {
    const l = TYPE_LABELS[[...types][0]!];
    if (l) return `${l.gender === "f" ? "Какую" : "Какой"} ${l.acc} вы имеете в виду?`;
  }
  return "Какой документ вы имеете в виду?";
}

function notFoundQuestion(entityType: string | undefined, r: TaskResolution): string {
  const l = entityType ? TYPE_LABELS[entityType] : undefined;
  const what = l ? l.acc : "документ";
  const name = r.mention ? ` «${r.mention}»` : "";
  const tail = r.candidates.length
    ? " Возможно, подойдёт один из вариантов ниже — или уточните название."
    : " Уточните название или укажите identity документа.";
  return `Не удалось найти ${what}${name}.${tail}`;
}

function packBlocks(input: AdequacyInput, budget: number, warnings: string[]) {
  const idx = input.index;
  const perEntity = input.entityContentTokens ?? 800;
  const blocks: ContextBlock[] = [];
  const evicted: Array<{ kind: string; ref: string; taskId?: string }> = [];
  let used = 0;
  const folderOf = (identity: string | null | undefined) => {
    if (!identity || !idx) return null;
    const i = idx.byIdentity.get(fold(identity));
    return i === undefined
      ? { identity, displayName: identity }
      : { identity, displayName: idx.docs[i]!.doc.displayName };
  };
  const entities: Extract<ContextBlock, { kind: "entity" }>[] = [];
  const seen = new Set<string>();
  for (const r of input.resolution?.tasks ?? []) {
    if (r.status !== "resolved" || !r.resolvedIdentity || !idx || seen.has(r.resolvedIdentity)) continue;
    const i = idx.byIdentity.get(fold(r.resolvedIdentity));
    if (i === undefined) continue;
    seen.add(r.resolvedIdentity);
    const d = idx.docs[i]!.doc;
    let content: unknown = d.content ?? {};
    let json = JSON.stringify(content);
    let truncated = false;
    if (estimateTokens(json) > perEntity) {
      json = json.slice(0, perEntity * 4);
      content = { truncatedJson: json };
      truncated = true;
    }
    const block = {
      kind: "entity" as const,
      taskId: r.taskId,
      identity: d.identity,
      documentType: d.documentType,
      displayName: d.displayName,
      folder: folderOf(d.folderIdentity),
      content,
      pinned: PINNED_BY.has(r.resolvedBy ?? ""),
      truncated,
      tokens: 0,
    };
    block.tokens = estimateTokens(JSON.stringify(block));
    entities.push(block);
  }
  // Pinned targets first and unconditionally (seed invariant), then the rest while they fit.
  for (const b of entities.filter((e) => e.pinned)) {
    blocks.push(b);
    used += b.tokens;
  }
  if (used > budget) warnings.push("pinned_targets_exceed_budget");
  for (const b of entities.filter((e) => !e.pinned)) {
    if (used + b.tokens > budget) {
      evicted.push({ kind: "entity", ref: b.identity, taskId: b.taskId });
      continue;
    }
    blocks.push(b);
    used += b.tokens;
  }
  for (const r of input.resolution?.tasks ?? []) {
    if (!r.items || !idx) continue;
    const t = input.plan.tasks.find((x) => x.id === r.taskId);
    const scope = t?.folderScope
      ? input.resolution?.tasks.find((x) => x.taskId === t.folderScope)?.resolvedIdentity
      : undefined;
    const items: Extract<ContextBlock, { kind: "list" }>["items"] = [];
    for (const id of r.items) {
      const i = idx.byIdentity.get(fold(id));
      if (i === undefined) continue;
      const d = idx.docs[i]!.doc;
      const item = {
        identity: d.identity,
        displayName: d.displayName,
        documentType: d.documentType,
        folderIdentity: d.folderIdentity ?? null,
      };
      const cost = estimateTokens(JSON.stringify(item));
      if (used + cost > budget) {
        evicted.push({ kind: "list_item", ref: d.identity });
        continue;
      }
      used += cost;
      items.push(item);
    }
    const block = {
      kind: "list" as const,
      taskId: r.taskId,
      entityType: t?.entityType ?? null,
      folder: folderOf(scope),
      items,
      total: r.itemsTotal ?? items.length,
      tokens: 0,
    };
    block.tokens = estimateTokens(JSON.stringify(block));
    blocks.push(block);
  }
  for (const f of input.docs ?? []) {
    const cost = estimateTokens(f.text) + estimateTokens(f.heading);
    if (used + cost > budget) {
      evicted.push({ kind: "doc", ref: f.docId });
      continue;
    }
    used += cost;
    blocks.push({ kind: "doc", docId: f.docId, heading: f.heading, text: f.text, tokens: cost });
  }
  return { blocks, evicted, tokens: used };
}
