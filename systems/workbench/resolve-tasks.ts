// Stage 06: resolution of every domain task of a plan, in dependency order. Folder scope restricts
// a child task to the resolved folder's subtree; a back-reference reuses its antecedent's target;
// a conversation reference picks from the targets of earlier turns; a user's pinned selection is
// re-checked against the current snapshot (it may have disappeared).
import { DEMONSTRATIVES, PREVIOUS_RE, PRONOUNS, SUPPORTED_TYPES, TYPE_LABELS, typeOf } from "./lexicon";
import { topoOrder } from "./plan-validate";
import { resolveMention } from "./resolve";
import { folderSubtree, type ResolverIndex } from "./resolve-index";
import { fold, words } from "./text";
import type { Plan, ScoredCandidate, Task, TaskResolution } from "./types";
import { listsType, readsDomain } from "./intents";

/** A document an earlier turn of the conversation was about (newest first in the list). */
export interface Referent {
  identity: string;
  documentType: string;
  displayName: string;
  turn: number;
}

export interface ResolveTasksResult {
  tasks: TaskResolution[];
  /** Tasks not resolved because what they depend on is unresolved (missing relation). */
  blocked: Array<{ taskId: string; waitsFor: string }>;
}

export const LIST_CAP = 50;

export function resolveTasks(plan: Plan, idx: ResolverIndex, referents: readonly Referent[] = []): ResolveTasksResult {
  const out: TaskResolution[] = [];
  const blocked: ResolveTasksResult["blocked"] = [];
  const byTask = new Map<string, TaskResolution>();
  for (const task of topoOrder(plan.tasks) ?? plan.tasks) {
    if (!readsDomain(task.intent)) continue;
    const waits = task.dependsOn.find((d) => {
      const r = byTask.get(d);
      return plan.tasks.some((x) => x.id === d && readsDomain(x.intent)) && (!r || r.status !== "resolved");
    });
    if (waits) {
      blocked.push({ taskId: task.id, waitsFor: waits });
      continue;
    }
    const r = resolveTask(task, idx, byTask, referents);
    byTask.set(task.id, r);
    out.push(r);
  }
  return { tasks: out, blocked };
}

function resolveTask(
  task: Task,
  idx: ResolverIndex,
  done: Map<string, TaskResolution>,
  referents: readonly Referent[],
): TaskResolution {
  const mention = task.mentions[0] ?? "";
  if (task.selection) return checkSelection(task, idx, mention);
  if (task.refersTo) {
    const ante = done.get(task.refersTo);
    if (ante)
      return {
        ...ante,
        taskId: task.id,
        mention,
        resolvedBy: ante.status === "resolved" ? "dependency" : ante.resolvedBy,
      };
  }
  const scopeTask = task.folderScope ? done.get(task.folderScope) : undefined;
  const scope = scopeTask?.resolvedIdentity ? folderSubtree(idx, scopeTask.resolvedIdentity) : undefined;

  if (listsType(task.intent)) return listTask(task, idx, scope, mention);
  // A pronoun or "этот отчёт" names no document: it points back, whatever source mode the plan gave it.
  if (isReference(mention)) return fromConversation(task, idx, referents, mention);

  const r = resolveMention(idx, {
    mention,
    ...(task.entityType ? { entityType: task.entityType } : {}),
    ...(scope ? { scope } : {}),
  });
  if (r.status === "not_found" && task.sourceMode === "conversation")
    return fromConversation(task, idx, referents, mention);
  return { taskId: task.id, mention, ...r };
}

/** A pronoun or demonstrative rather than a name ("она", "эта композиция", "предыдущая"). */
export function isReference(mention: string): boolean {
  const ws = words(fold(mention));
  if (ws.length === 0) return true;
  // Whole words, and nothing but reference words and type nouns: "Табель" (starts with "та"),
  // "Том 1" or "Найденные ошибки" are names.
  const pointing = (w: string) => PRONOUNS[w] !== undefined || DEMONSTRATIVES.has(w) || PREVIOUS_RE.test(w);
  return (
    ws.length <= 3 &&
    ws.some(pointing) &&
    ws.every((w) => pointing(w) || typeOf(w) !== undefined || w === "же" || w === "документ")
  );
}

function fromConversation(
  task: Task,
  idx: ResolverIndex,
  referents: readonly Referent[],
  mention: string,
): TaskResolution {
  const gender = words(fold(mention))
    .map((w) => PRONOUNS[w])
    .find((g) => g !== undefined);
  const alive = referents.filter((r) => idx.byIdentity.has(fold(r.identity)));
  let pool = task.entityType ? alive.filter((r) => r.documentType === task.entityType) : alive;
  if (gender === "f" || gender === "m") {
    const byGender = pool.filter((r) => TYPE_LABELS[r.documentType]?.gender === gender);
    if (byGender.length) pool = byGender;
  }
  const latestTurn = pool[0]?.turn;
  const latest = pool.filter((r) => r.turn === latestTurn);
  const uniq = [...new Map(latest.map((r) => [r.identity, r])).values()];
  const candidates: ScoredCandidate[] = uniq.slice(0, 5).map((r, k) => ({
    candidateId: `c${k + 1}`,
    identity: r.identity,
    displayName: r.displayName,
    documentType: r.documentType,
    score: uniq.length === 1 ? 0.9 : 0.6,
    signals: ["conversation"],
  }));
  if (candidates.length === 0) return { taskId: task.id, mention, status: "not_found", candidates: [] };
  if (candidates.length > 1) return { taskId: task.id, mention, status: "ambiguous", candidates };
  return {
    taskId: task.id,
    mention,
    status: "resolved",
    resolvedIdentity: candidates[0]!.identity,
    resolvedBy: "conversation",
    candidates,
  };
}

function checkSelection(task: Task, idx: ResolverIndex, mention: string): TaskResolution {
  const sel = task.selection!;
  const i = idx.byIdentity.get(fold(sel.identity));
  if (i !== undefined) {
    const d = idx.docs[i]!.doc;
    return {
      taskId: task.id,
      mention,
      status: "resolved",
      resolvedIdentity: d.identity,
      resolvedBy: sel.source === "reranker" ? "reranker" : "clarification",
      candidates: [
        {
          candidateId: sel.candidateId,
          identity: d.identity,
          displayName: d.displayName,
          documentType: d.documentType,
          score: 1,
          signals: [sel.source === "reranker" ? "reranker" : "selected"],
        },
      ],
    };
  }
  // The chosen document is gone: offer what the mention resolves to now, and ask again.
  const fresh = mention
    ? resolveMention(idx, { mention, ...(task.entityType ? { entityType: task.entityType } : {}) })
    : undefined;
  const offered = !fresh
    ? []
    : fresh.status === "resolved"
      ? fresh.candidates.filter((c) => c.identity === fresh.resolvedIdentity)
      : fresh.candidates.filter((c) => c.score >= 0.5);
  const candidates = offered.map((c, k) => ({ ...c, candidateId: `c${k + 1}` }));
  return { taskId: task.id, mention, status: "not_found", candidates, lostSelection: sel.identity };
}

function listTask(task: Task, idx: ResolverIndex, scope: Set<number> | undefined, mention: string): TaskResolution {
  const type = task.entityType;
  if (type && !(SUPPORTED_TYPES as readonly string[]).includes(type))
    return { taskId: task.id, mention, status: "unsupported_type", candidates: [] };
  const filterWords = mention && !isReference(mention) ? words(fold(mention)) : [];
  const items: string[] = [];
  const pool = scope ? [...scope] : idx.docs.map((_, i) => i);
  for (const i of pool) {
    const d = idx.docs[i]!;
    if (type && d.doc.documentType !== type) continue;
    if (!type && !(SUPPORTED_TYPES as readonly string[]).includes(d.doc.documentType)) continue;
    if (
      filterWords.length &&
      !filterWords.every((w) => d.nameWords.some((n) => n.startsWith(w.slice(0, Math.max(4, w.length - 2)))))
    )
      continue;
    items.push(d.doc.identity);
  }
  items.sort();
  return {
    taskId: task.id,
    mention,
    status: "resolved",
    candidates: [],
    items: items.slice(0, LIST_CAP),
    itemsTotal: items.length,
    resolvedBy: "exact",
  };
}
