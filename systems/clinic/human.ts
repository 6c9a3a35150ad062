import { validStep } from "./turn-logic";
import type { BranchCode, ClinicState, Registry } from "./types";

/**
 * The human in the dialogue (issue 32): an operator who took the thread is the dialogue
 * machine's `handler.human` state, with who and since when in its context. While there the bot
 * is silent — no router, no branch — and the patient's messages get a holding reply that says
 * what happens next; the operator's messages are events of the machine; release and close return
 * the thread to the bot, where the machine remembers it.
 */

/** The schema lives with the wire contract (the thread's GET shows who holds it). */
export { HumanHold } from "../../contract/clinic/human";
import type { HumanHold } from "../../contract/clinic/human";

/** The machine's operator events (the inbox routes send them through systems/clinic/operator-turn.ts). */
export type HumanEvent =
  | { type: "operator.take"; operator: string; at: string }
  | { type: "operator.message"; operator: string; text: string; at: string }
  /** Who will answer a thread nobody holds yet (issue 43): `assignee` null unassigns. */
  | { type: "operator.assign"; operator: string; assignee: string | null; at: string }
  /** The holder hands the thread to a colleague: the human state goes on, the bot stays silent. */
  | { type: "operator.transfer"; operator: string; to: string; at: string }
  /** `at` is absent in logs written before issue 32 (release was the only operator event then). */
  | { type: "operator.release"; at?: string }
  | { type: "operator.close"; at?: string };

/** A patient's message while a human holds the thread; `at` and the desk's silence from issue 43 on. */
export interface HeldMessage {
  at?: string;
  holdRepeatMs?: number;
}

/** While nobody has answered yet and the holding reply was just given: a short acknowledgement. */
export const HOLD_ACK = "Сообщение передано администратору — ответ придёт сюда.";

/**
 * A quiet bot while a human holds (issue 43): the holding reply once per hold (the patient learns
 * who answers and where); again only after `holdRepeatMs` of silence (since it was given, or since
 * an operator last wrote); in between, a short acknowledgement while the patient still waits for
 * the first answer, and nothing at all once an operator is talking to them. A message logged
 * before issue 43 (no `at`) got the holding reply every time, and replays so.
 */
export function heldAnswer(h: HumanHold, m: HeldMessage): { reply: string; hold: HumanHold } {
  const full = () => ({ reply: holdingReply(h), hold: m.at ? { ...h, heldReplyAt: m.at } : h });
  if (!m.at || m.holdRepeatMs === undefined || !h.heldReplyAt) return full();
  const last = Math.max(Date.parse(h.heldReplyAt), Date.parse(h.lastOperatorAt ?? "") || 0);
  if (Date.parse(m.at) - last >= m.holdRepeatMs) return full();
  return { reply: h.replies > 0 ? "" : HOLD_ACK, hold: h };
}

/** What the bot answers while a human holds the thread: true about who answers and where. */
export function holdingReply(h: HumanHold): string {
  const who = h.operator && h.operator !== "оператор" ? `Администратор (${h.operator})` : "Администратор клиники";
  return `${who} уже ведёт этот диалог и ответит вам здесь, в этом чате. Бот пока не отвечает; если станет хуже — звоните 103.`;
}

/**
 * Release (or close) of an escalated thread: the escalation ends, and a stepped scenario the
 * escalation suspended comes back at its step with its slots (the machine enters that branch's
 * history state), so the booking goes on where it stopped.
 */
export function releaseToSuspended(reg: Registry, state: ClinicState): ClinicState {
  const s = state.suspended!;
  return {
    ...state,
    activeBranch: s.intent,
    step: validStep(reg, s.intent, s.step),
    slots: s.slots,
    suspended: null,
    routerDecision: null,
    handoffCount: 0,
    softInsertionCount: 0,
    escalationReason: null,
  };
}

export const suspendedIs = (state: ClinicState, branch: BranchCode) =>
  state.activeBranch === "escalate_human" && state.suspended?.intent === branch;
