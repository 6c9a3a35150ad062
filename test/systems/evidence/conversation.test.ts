import { describe, expect, it } from "vitest";
import { getInitialSnapshot, transition } from "xstate";
import type { ConversationState, ToolRun } from "../../../systems/evidence/artifacts";
import { interpretDeterministic } from "../../../systems/evidence/interpret-rules";
import {
  evidenceMachine,
  type EvidenceEffect,
  type EvidenceEvent,
} from "../../../systems/evidence/conversation.machine";
import { dateOut, settlementRow, toolRun } from "./fixtures";

type Snap = ReturnType<typeof getInitialSnapshot<typeof evidenceMachine>>;

/** A pure turn: effects answered by fakes, the way the driver answers them with real ones. */
function turn(
  snap: Snap,
  text: string,
  tools: (plan: Extract<EvidenceEffect, { type: "effect.execute" }>["plan"]) => ToolRun[],
) {
  const effects: EvidenceEffect[] = [];
  let queue: EvidenceEvent[] = [{ type: "user.message", text, requestId: `r-${text}`, offline: true }];
  while (queue.length) {
    const [next, actions] = transition(evidenceMachine, snap, queue.shift()!);
    snap = next;
    for (const a of actions as { type: string; params?: unknown }[]) {
      if (a.type !== "xstate.emit") continue;
      const e = (a.params as { event: EvidenceEffect }).event;
      effects.push(e);
      if (e.type === "effect.interpret")
        queue.push({ type: "interpreted", output: interpretDeterministic(e.text, e.state), via: "deterministic" });
      if (e.type === "effect.plan")
        queue.push({
          type: "planned",
          plan: {
            request_id: "r",
            plan_version: 1,
            goal: "g",
            planned_by: "deterministic",
            steps: [],
            fallbacks: [],
            stop_conditions: [],
          },
        });
      if (e.type === "effect.execute") queue.push({ type: "executed", toolRuns: tools(e.plan), truncated: [] });
      if (e.type === "effect.critic") queue.push({ type: "criticized", critique: null, status: "offline" });
      if (e.type === "effect.answer") queue.push({ type: "answered", text: null });
    }
  }
  return { snap, effects };
}

const settlements = (date: string) => () => [
  toolRun("S2", "resolve_period_or_asof", "success", dateOut(date)),
  toolRun("S4", "get_open_supplier_settlements", "success", {
    status: "ok",
    note: "",
    as_of_date: date,
    movements_scanned: 2,
    rows: [settlementRow("cp-a", "ООО «А»", 1000)],
  }),
];

describe("evidence conversation machine", () => {
  it("runs interpret → plan → execute → critic → answer and always records the turn", () => {
    const s0 = getInitialSnapshot(evidenceMachine, { conversationId: "c1" });
    const { snap, effects } = turn(s0, "По каким поставщикам висят хвосты?", settlements("2026-04-10"));
    expect(effects.map((e) => e.type)).toEqual([
      "effect.interpret",
      "effect.plan",
      "effect.execute",
      "effect.critic",
      "effect.answer",
      "effect.record",
    ]);
    expect(snap.value).toBe("idle");
    expect(snap.context.turn).toBeNull(); // the evidence leaves the snapshot
    expect(snap.context.last).toMatchObject({
      outcome: "PARTIALLY_ANSWERED",
      reasonCodes: ["AMBIGUOUS_BUSINESS_TERM", "MISSING_AS_OF_DATE", "ASSUMPTION_APPLIED_EXPLICITLY"],
    });
    expect(JSON.stringify(evidenceMachine.getPersistedSnapshot(snap)).length).toBeLessThan(20_000);
  });

  it("a blocked turn skips plan and execution but not the critic", () => {
    const s0 = getInitialSnapshot(evidenceMachine, { conversationId: "c1" });
    const { snap, effects } = turn(s0, "Покажи оплаты по нему", () => []);
    expect(effects.map((e) => e.type)).toEqual(["effect.interpret", "effect.critic", "effect.answer", "effect.record"]);
    expect(snap.context.last?.outcome).toBe("BLOCKED_BY_AMBIGUITY");
    expect(snap.context.state.pending_question).toBe("Покажи оплаты по нему");
  });

  it("carries premises between turns: the assumed date stays assumed until the user names one", () => {
    let snap = getInitialSnapshot(evidenceMachine, { conversationId: "c1" });
    snap = turn(snap, "По каким поставщикам висят хвосты?", settlements("2026-04-10")).snap;
    const s1: ConversationState = snap.context.state;
    expect(s1.active_time_scope).toMatchObject({ as_of_date: "2026-04-10", premise: "assumed" });
    expect(s1.resolved_business_terms[0]).toMatchObject({ surface: "хвосты", premise: "assumed" });

    // Restating the question without a date: the assumption is inherited as an assumption.
    const again = turn(snap, "А по поставщикам какие хвосты?", settlements("2026-04-10"));
    expect(again.snap.context.state.active_time_scope?.premise).toBe("assumed");
    expect(again.snap.context.last?.reasonCodes).toContain("ASSUMPTION_APPLIED_EXPLICITLY");

    // The user names the date and the reading: both become confirmed facts of the conversation.
    const named = turn(again.snap, "Любые незакрытые остатки на 31.03.2026", settlements("2026-03-31"));
    expect(named.snap.context.state.active_time_scope).toMatchObject({
      as_of_date: "2026-03-31",
      premise: "confirmed",
    });
    expect(named.snap.context.state.resolved_business_terms[0]?.premise).toBe("confirmed");
    expect(named.snap.context.last).toMatchObject({ outcome: "FULLY_ANSWERED", reasonCodes: [] });

    // Next turn inherits them — marked inherited, not re-confirmed, and the answer stays full.
    const follow = turn(named.snap, "А хвосты по поставщикам?", settlements("2026-03-31"));
    expect(follow.snap.context.state.active_time_scope?.premise).toBe("inherited");
    expect(follow.snap.context.last?.outcome).toBe("FULLY_ANSWERED");
  });
});
