import { randomUUID } from "node:crypto";
import { AppError } from "../../driver/errors";
import { runTurn } from "../../driver/turn";
import type { SnapshotRow } from "../../storage/snapshots";
import { closingEvents, interactionRows, runOutcome } from "./commit";
import { replyStage, workbenchEffects, type EffectPorts } from "./effects";
import {
  interactionSpec,
  MODEL_FAILURE,
  type InteractionEvent,
  type ReplyReceived,
  type WorkspaceRef,
} from "./interaction.machine";
import { discardedTurn, turnReport } from "./interaction-report";
import { writeInteractionTurn } from "./store/interaction-turn";
import { interactionKey } from "./stored-machines";

/**
 * A Workbench message through the driver: the one event the route made of it goes to its
 * Interaction (a new one, or the one whose question it answers); the machine asks for the
 * effects (workbenchEffects), the commit writes what its final snapshot says (commit.ts). A reply
 * the machine released as a request of its own is discarded and the text starts a new Interaction.
 */
export type MessageTurn =
  | { kind: "request"; text: string; stage: Record<string, unknown> }
  | { kind: "reply"; interactionId: string; stored: SnapshotRow; event: ReplyReceived; text: string };

export type TurnPorts = Omit<EffectPorts, "requestStage">;

function interactionTurn(
  p: TurnPorts,
  requestStage: Record<string, unknown>,
  interactionId: string,
  a: { stored: SnapshotRow | null; input?: unknown; events: InteractionEvent[] },
) {
  const documentationVersion = p.docs?.version ?? null;
  return runTurn({
    sql: p.deps.db.sql,
    run: p.run,
    spec: interactionSpec,
    key: interactionKey(interactionId),
    conversationId: p.conversationId,
    ...a,
    // The Interaction's event log (machine_events): what it was given, as the driver applied it.
    log: {},
    // A reply is applied only with its continuation: when the answer model failed, or the reply
    // was a request of its own, nothing of the turn is stored and the question stays open.
    discard: discardedTurn,
    effects: workbenchEffects({ ...p, requestStage }),
    commit: (tx, snap) =>
      writeInteractionTurn(tx, p.conversationId, interactionRows(snap), { runId: p.run.id, documentationVersion }),
    closing: (snap) => {
      const report = turnReport(snap);
      // A cancel prepares nothing, so no stage records how its reply was read: stage 07 says it here.
      if (report.cancelledReply)
        p.trace.record("07", "ok", { reply: replyStage(report.cancelledReply), interactionId, status: "cancelled" });
      p.trace.finish(report.trace);
      return closingEvents(snap);
    },
    outcome: runOutcome,
  });
}

/** A new Interaction for the message's text, whose first turn supersedes the conversation's active one. */
function newInteraction(p: TurnPorts, stage: Record<string, unknown>, text: string, workspace: WorkspaceRef) {
  const input = { interactionId: `interaction-${randomUUID()}`, conversationId: p.conversationId, rootText: text };
  return interactionTurn(p, stage, input.interactionId, {
    input,
    stored: null,
    events: [{ type: "prepare", workspace, origin: "request" }],
  });
}

export async function runMessageTurn(p: TurnPorts, m: MessageTurn, workspace: WorkspaceRef): Promise<void> {
  if (m.kind === "request") return void (await newInteraction(p, m.stage, m.text, workspace));
  const { snapshot } = await interactionTurn(p, {}, m.interactionId, { stored: m.stored, events: [m.event] });
  const end = turnReport(snapshot).discarded;
  // The run ends with `error` (then `done`); the question stays open for the same answer again.
  if (end === "reply_failed") throw new AppError(MODEL_FAILURE.reply.code, MODEL_FAILURE.reply.message);
  // The reply was a request of its own: stage 07 of the new Interaction says how it was read.
  if (end === "released") await newInteraction(p, { reply: replyStage(snapshot.context.reply!) }, m.text, workspace);
}
