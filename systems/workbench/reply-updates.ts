import type { PlanUpdate } from "./patch";
import { parseClause } from "./plan";
import { currentOrArchived, descriptiveChoice, obviousNewRequest, type ReplyKind } from "./reply";
import { resolveMention } from "./resolve";
import type { ResolverIndex } from "./resolve-index";
import { isReference } from "./resolve-tasks";
import type { Candidate } from "./types";

/**
 * What a free-text clarification answer amounts to once its kind is known (pure; the
 * classification effect calls it over the request's workspace index): the kind when the
 * classifier gave none, and the plan updates an answer or a correction asks for.
 */

/**
 * With no classifier verdict (it failed or is switched off), a reply that is plainly a request of
 * its own starts anew; anything else is an answer, resolved again (seed 000).
 */
export function fallbackKind(
  text: string,
  candidates: readonly Candidate[],
  why: "classifier_off" | "classifier_fallback",
) {
  const fresh = obviousNewRequest(text, candidates);
  return { kind: (fresh ? "new_request" : "answer") as ReplyKind, decidedBy: fresh ? `${why}+new_request` : why };
}

/**
 * A free-text answer or correction becomes a new mention (and type) for the task — only when it
 * names something in the current workspace; otherwise it is unclear and the question is asked again.
 */
function mentionUpdates(text: string, task: ReplyTask, index: ResolverIndex) {
  const p = parseClause(text);
  const name = p.mentions[0] ?? p.names[0];
  const given = name && !isReference(name) ? name.trim() : "";
  const newType = p.entityType ?? p.nameType;
  const retype = !!newType && newType !== task.entityType;
  // a correction of the type alone («не отчёт, а форму») keeps the name the task asked for
  const kept = !given && retype ? (task.mentions?.find((m) => !isReference(m)) ?? "") : "";
  const mention = given || kept;
  const type = newType ?? task.entityType;
  const found =
    mention && resolveMention(index, { mention, ...(type ? { entityType: type } : {}) }).status !== "not_found";
  if (!found) return [];
  return [
    ...(given ? [{ taskId: task.id, field: "mention", value: mention }] : []),
    ...(retype ? [{ taskId: task.id, field: "entityType", value: newType }] : []),
  ] as PlanUpdate[];
}

type ReplyTask = { id: string; entityType: string | undefined; mentions?: readonly string[] };

/**
 * The updates of a classified reply: an answer is resolved against the closed list first
 * ("актуальную" → the non-archived candidate), then against the workspace as a new mention; a
 * correction only against the workspace (which needs the task as planned). Other kinds: none.
 */
export function replyUpdates(
  r: { kind: ReplyKind; text: string; candidates: readonly Candidate[]; taskId: string },
  task: ReplyTask | null,
  index: ResolverIndex,
): { candidateId: string | null; updates: PlanUpdate[] } {
  const chosen =
    r.kind === "answer" ? (descriptiveChoice(r.text, r.candidates) ?? currentOrArchived(r.text, r.candidates)) : null;
  if (chosen)
    return { candidateId: chosen, updates: [{ taskId: r.taskId, field: "resolvedEntity", candidateId: chosen }] };
  const answers = (r.kind === "answer" || r.kind === "correction") && task !== null;
  return { candidateId: null, updates: answers ? mentionUpdates(r.text, task, index) : [] };
}
