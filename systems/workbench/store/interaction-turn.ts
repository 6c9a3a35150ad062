import { AppError } from "../../../driver/errors";
import { transitionStored } from "../../../driver/side-machines";
import type { Tx } from "../../../storage/db";
import { appendMessages } from "../../../storage/messages";
import type { InteractionRows } from "../commit";
import { interactionSpec } from "../interaction.machine";
import { interactionKey } from "../stored-machines";
import {
  activeInteraction,
  closeClarification,
  insertClarification,
  openClarificationOf,
  upsertInteraction,
} from "./interactions";

/**
 * Writes a Workbench turn's rows (commit.ts) in the turn's transaction, behind the snapshot's
 * version check: the Interaction's snapshot is the one authority, the `interactions` and
 * `clarifications` rows are its projections, written here and nowhere else.
 */
export async function writeInteractionTurn(
  tx: Tx,
  conversationId: string,
  rows: InteractionRows,
  o: { runId: string | null; documentationVersion: string | null },
): Promise<void> {
  if (rows.supersedes) await supersedeActive(tx, conversationId, rows.interaction.id);
  const ids = await appendMessages(tx, conversationId, rows.messages, o.runId);
  const first = ids[0]?.id ?? null;
  // The snapshot's version check already serialised this turn; a question closed meanwhile is a bug, refused all the same.
  if (rows.closes && !(await closeClarification(tx, rows.closes.id, rows.closes.status, first)))
    throw new AppError("conflict", "На это уточнение уже ответили.");
  const i = rows.interaction;
  await upsertInteraction(tx, {
    id: i.id,
    conversationId,
    rootMessageId: i.root ? first : null,
    status: i.status,
    plan: i.plan,
    planVersion: i.planVersion,
    workspaceGeneration: i.workspaceGeneration,
    workspaceSnapshotSha256: i.workspaceSnapshotSha256,
    documentationVersion: o.documentationVersion,
  });
  if (rows.asks)
    await insertClarification(tx, {
      ...rows.asks,
      interactionId: i.id,
      questionMessageId: ids.at(-1)?.id ?? null,
    });
}

/** Closes the conversation's active Interaction (if another) as superseded, with its open question. */
async function supersedeActive(tx: Tx, conversationId: string, byId: string): Promise<void> {
  const active = await activeInteraction(tx, conversationId);
  if (!active || active.id === byId) return;
  await transitionStored(tx, interactionSpec, interactionKey(active.id), conversationId, {
    type: "supersede",
    by: byId,
  });
  await upsertInteraction(tx, { ...active, status: "superseded" });
  const open = await openClarificationOf(tx, active.id);
  if (open) await closeClarification(tx, open.id, "superseded", null);
}
