import { expect } from "vitest";
import { initialTransition, transition, type AnyStateMachine } from "xstate";
import { interactionMachine } from "../../../systems/workbench/interaction.machine";
import type { Tx } from "../../../storage/db";
import { listMachineEvents } from "../../../storage/machine-events";
import { loadSnapshot } from "../../../storage/snapshots";
import { eventsNamed, postSse, type SseResponse } from "../../utils/sse";
import type { ScriptedLlm } from "../../utils/scripted-llm";
import { openConversation } from "../../utils/systems-conversations";
import { workspace } from "./fixtures";

export type Json = Record<string, any>;

export const newConversation = (base: string, headers: Record<string, string> = {}): Promise<string> =>
  openConversation(base, "workbench", headers);

export function send(
  base: string,
  conversationId: string,
  body: Json,
  headers: Record<string, string> = {},
): Promise<SseResponse> {
  return postSse(`${base}/v1/workbench/conversations/${conversationId}/messages`, body, headers);
}

export const one = (r: SseResponse, name: string): Json | undefined => eventsNamed(r, name)[0] as Json | undefined;
export const stage = (r: SseResponse, id: string): Json | undefined =>
  (eventsNamed(r, "stage") as Json[]).find((s) => s.stageId === id);

export async function interaction(base: string, id: string, headers: Record<string, string> = {}): Promise<Json> {
  const r = await fetch(`${base}/v1/workbench/interactions/${id}`, { headers });
  expect(r.status).toBe(200);
  return (await r.json()) as Json;
}

/**
 * Snapshot replay: the events stored for a machine, replayed through the pure machine from its
 * input, must reproduce the snapshot the driver persisted.
 */
export async function expectReplayMatches(sql: Tx, key: string): Promise<number> {
  const machine: AnyStateMachine = interactionMachine;
  // The log is found by the snapshot's conversation and key (migration 000026).
  const stored = await loadSnapshot(sql, key);
  expect(stored).not.toBeNull();
  const events = (await listMachineEvents(sql, key, stored!.conversationId)).map((l) => l.event) as Array<{
    type: string;
    input?: unknown;
  }>;
  expect(events[0]?.type).toBe("xstate.init");
  let [s] = initialTransition(machine, events[0]!.input as never);
  for (const e of events.slice(1)) [s] = transition(machine, s, e as never);
  expect(JSON.parse(JSON.stringify(machine.getPersistedSnapshot(s)))).toEqual(stored!.snapshot);
  return events.length;
}

/** A reply to the open clarification `q`: `text` over `workspace`, plus the fields the case adds (`extra`). */
export const replyTo = (base: string, conv: string, q: Json, text: string, workspace: unknown, extra: Json = {}) =>
  send(base, conv, { text, workspace, replyToClarificationId: q.id, ...extra });

/** The ambiguous request the clarification cases start from: «Расчёт скидки» names two compositions (fixtures). */
export const discountRequest = "Покажи композицию «Расчёт скидки»";

/**
 * Sends `discountRequest` in `conv` with the reranker scripted to clarify; `body` carries the
 * workspace and what the case adds. Returns the response and the question it must end on (`q`).
 */
export async function askWhichDiscount(
  llm: ScriptedLlm,
  base: string,
  conv: string,
  body: Json,
): Promise<{ r: SseResponse; q: Json }> {
  llm.script("reranker", '{"choice": "clarify"}');
  const r = await send(base, conv, { text: discountRequest, ...body });
  return { r, q: one(r, "clarification_required")! };
}

/** The answer the reliability cases send to a question: the first candidate, picked by click, over `workspace`. */
export const firstCandidateAnswer = (q: {
  id: string;
  interactionId: string;
  candidates: { candidateId: string }[];
}) => ({
  text: "первый вариант",
  workspace,
  interactionId: q.interactionId,
  replyToClarificationId: q.id,
  selectedCandidateId: q.candidates[0]!.candidateId,
});
