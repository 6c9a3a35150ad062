import type { Tx } from "../../../storage/db";

/** Rows of 000002_interactions.sql: the queryable projection of the Interaction machines. */

export interface InteractionRow {
  id: string;
  conversationId: string;
  rootMessageId: string | null;
  status: string;
  plan: unknown;
  planVersion: number;
  workspaceGeneration: string | null;
  workspaceSnapshotSha256: string | null;
  documentationVersion: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ClarificationRow {
  id: string;
  interactionId: string;
  taskId: string;
  slot: string;
  question: string;
  questionMessageId: string | null;
  answerMessageId: string | null;
  candidates: unknown[];
  status: string;
  planVersion: number;
  createdAt: Date;
  resolvedAt: Date | null;
}

type RawInteraction = {
  id: string;
  conversation_id: string;
  root_message_id: bigint | null;
  status: string;
  plan_json: unknown;
  plan_version: number;
  workspace_generation: string | null;
  workspace_snapshot_sha256: string | null;
  documentation_version: string | null;
  created_at: Date;
  updated_at: Date;
};
type RawClarification = {
  id: string;
  interaction_id: string;
  task_id: string;
  slot: string;
  question: string;
  question_message_id: bigint | null;
  answer_message_id: bigint | null;
  candidate_snapshot_json: unknown[];
  status: string;
  plan_version: number;
  created_at: Date;
  resolved_at: Date | null;
};

const toInteraction = (r: RawInteraction): InteractionRow => ({
  id: r.id,
  conversationId: r.conversation_id,
  rootMessageId: r.root_message_id === null ? null : String(r.root_message_id),
  status: r.status,
  plan: r.plan_json,
  planVersion: r.plan_version,
  workspaceGeneration: r.workspace_generation,
  workspaceSnapshotSha256: r.workspace_snapshot_sha256,
  documentationVersion: r.documentation_version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toClarification = (r: RawClarification): ClarificationRow => ({
  id: r.id,
  interactionId: r.interaction_id,
  taskId: r.task_id,
  slot: r.slot,
  question: r.question,
  questionMessageId: r.question_message_id === null ? null : String(r.question_message_id),
  answerMessageId: r.answer_message_id === null ? null : String(r.answer_message_id),
  candidates: r.candidate_snapshot_json ?? [],
  status: r.status,
  planVersion: r.plan_version,
  createdAt: r.created_at,
  resolvedAt: r.resolved_at,
});

/** What a turn writes; the timestamps are the database's. */
export type InteractionWrite = Omit<InteractionRow, "createdAt" | "updatedAt">;

/** Insert or update the projection row in one statement (the snapshot write already serialized it). */
export async function upsertInteraction(tx: Tx, w: InteractionWrite): Promise<void> {
  await tx`
    insert into interactions (id, conversation_id, root_message_id, status, plan_json, plan_version, workspace_generation, workspace_snapshot_sha256, documentation_version)
    values (${w.id}, ${w.conversationId}, ${w.rootMessageId}, ${w.status}, ${w.plan === null ? null : tx.json(w.plan as never)}, ${w.planVersion},
            ${w.workspaceGeneration}, ${w.workspaceSnapshotSha256}, ${w.documentationVersion})
    on conflict (id) do update set status = excluded.status, plan_json = excluded.plan_json, plan_version = excluded.plan_version,
      root_message_id = coalesce(interactions.root_message_id, excluded.root_message_id),
      workspace_generation = coalesce(excluded.workspace_generation, interactions.workspace_generation),
      workspace_snapshot_sha256 = coalesce(excluded.workspace_snapshot_sha256, interactions.workspace_snapshot_sha256),
      documentation_version = coalesce(excluded.documentation_version, interactions.documentation_version),
      updated_at = now()`;
}

export async function getInteraction(sql: Tx, id: string): Promise<InteractionRow | null> {
  const rows = await sql<RawInteraction[]>`select * from interactions where id = ${id}`;
  return rows[0] ? toInteraction(rows[0]) : null;
}

/** The conversation's Interactions, oldest first (the conversation as the API shows it). */
export async function listInteractions(sql: Tx, conversationId: string): Promise<InteractionRow[]> {
  const rows = await sql<RawInteraction[]>`
    select * from interactions where conversation_id = ${conversationId} order by created_at`;
  return rows.map(toInteraction);
}

export async function activeInteraction(sql: Tx, conversationId: string): Promise<InteractionRow | null> {
  const rows = await sql<RawInteraction[]>`
    select * from interactions where conversation_id = ${conversationId}
      and status in ('preparing', 'awaiting_clarification', 'answering')`;
  return rows[0] ? toInteraction(rows[0]) : null;
}

export async function insertClarification(
  tx: Tx,
  /** A new clarification is open and unanswered: the row's fields but its status, answer and times. */
  c: Omit<ClarificationRow, "answerMessageId" | "status" | "createdAt" | "resolvedAt">,
): Promise<void> {
  await tx`
    insert into clarifications (id, interaction_id, task_id, slot, question, question_message_id, candidate_snapshot_json, status, plan_version)
    values (${c.id}, ${c.interactionId}, ${c.taskId}, ${c.slot}, ${c.question}, ${c.questionMessageId}, ${tx.json(c.candidates as never)}, 'open', ${c.planVersion})`;
}

export async function getClarification(sql: Tx, id: string): Promise<ClarificationRow | null> {
  const rows = await sql<RawClarification[]>`select * from clarifications where id = ${id}`;
  return rows[0] ? toClarification(rows[0]) : null;
}

export async function openClarificationOf(sql: Tx, interactionId: string): Promise<ClarificationRow | null> {
  const rows = await sql<
    RawClarification[]
  >`select * from clarifications where interaction_id = ${interactionId} and status = 'open'`;
  return rows[0] ? toClarification(rows[0]) : null;
}

export async function listClarifications(sql: Tx, interactionId: string): Promise<ClarificationRow[]> {
  const rows = await sql<
    RawClarification[]
  >`select * from clarifications where interaction_id = ${interactionId} order by created_at, id`;
  return rows.map(toClarification);
}

/**
 * Closes an open clarification; false when it was not open any more (the turn that closes it
 * holds the Interaction's snapshot version, so this is a projection out of step, refused).
 */
export async function closeClarification(
  tx: Tx,
  id: string,
  status: "answered" | "unclear" | "cancelled" | "superseded",
  answerMessageId: string | null,
): Promise<boolean> {
  const rows = await tx`
    update clarifications set status = ${status}, answer_message_id = coalesce(${answerMessageId}, answer_message_id), resolved_at = now()
    where id = ${id} and status = 'open' returning id`;
  return rows.length === 1;
}

/** Answered clarifications of an Interaction with their answer text (for the ModelRequest projection). */
export async function answeredClarifications(
  sql: Tx,
  interactionId: string,
): Promise<Array<{ question: string; answer: string }>> {
  return sql<Array<{ question: string; answer: string }>>`
    select c.question, m.text as answer from clarifications c join messages m on m.id = c.answer_message_id
    where c.interaction_id = ${interactionId} and c.status = 'answered' order by c.created_at`;
}
