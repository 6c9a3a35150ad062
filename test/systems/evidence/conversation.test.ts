import { describe, expect, it } from "vitest";
import { getInitialSnapshot, transition } from "xstate";
import type { ConversationState, ToolRun } from "../../../systems/evidence/artifacts";
import { interpretDeterministic } from "../../../systems/evidence/interpret-rules";
import { evidenceMachine } from "../../../systems/evidence/conversation.machine";
import type { EvidenceEffect, EvidenceEvent, ModelStep } from "../../../systems/evidence/conversation-types";
import { dateOut, settlementRow, registerRun, toolRun } from "./fixtures";

/** The effects' kinds in order, one line: a sequence reads (and compares) as a sentence. */
const effectKinds = (effects: readonly { type: string }[]) =>
  effects.map((e) => e.type.replace(/^effect\./, "")).join(" ");

type Snap = ReturnType<typeof getInitialSnapshot<typeof evidenceMachine>>;

const plan0 = {
  request_id: "r",
  plan_version: 1,
  goal: "g",
  planned_by: "deterministic" as const,
  steps: [],
  fallbacks: [],
  stop_conditions: [],
};

/**
 * A pure turn: effects answered by fakes, the way the driver answers them with real ones.
 * Offline by default; online, the model steps named in `fail` answer `model.failed` with `codes`.
 */
function turn(
  snap: Snap,
  text: string,
  tools: (plan: Extract<EvidenceEffect, { type: "effect.execute" }>["plan"]) => ToolRun[],
  o: {
    offline?: boolean;
    fail?: ModelStep[];
    codes?: string[];
    /** The answer step's event, written after reading the effect (its claims menu). */
    answer?: (e: Extract<EvidenceEffect, { type: "effect.answer" }>) => EvidenceEvent;
  } = {},
) {
  const effects: EvidenceEffect[] = [];
  const offline = o.offline ?? true;
  const failed = (role: ModelStep): EvidenceEvent => ({
    type: "model.failed",
    role,
    codes: o.codes ?? ["unavailable", "unavailable"],
    issues: ["unavailable: 503"],
  });
  const fails = (role: ModelStep) => !offline && (o.fail ?? []).includes(role);
  let queue: EvidenceEvent[] = [{ type: "user.message", text, requestId: `r-${text}`, offline }];
  while (queue.length) {
    const [next, actions] = transition(evidenceMachine, snap, queue.shift()!);
    snap = next;
    for (const a of actions as { type: string; params?: unknown }[]) {
      if (a.type !== "xstate.emit") continue;
      const e = (a.params as { event: EvidenceEffect }).event;
      effects.push(e);
      if (e.type === "effect.interpret") {
        const out = interpretDeterministic(e.text, e.state);
        queue.push(
          offline
            ? { type: "model.failed", role: "interpreter", codes: ["offline"], issues: [] }
            : fails("interpreter") || !out
              ? failed("interpreter")
              : { type: "interpreted", output: out, via: "llm" },
        );
      }
      if (e.type === "effect.interpretByRules")
        queue.push({ type: "interpreted", output: interpretDeterministic(e.text, e.state), via: "deterministic" });
      if (e.type === "effect.plan")
        queue.push(
          offline
            ? { type: "model.failed", role: "planner", codes: ["offline"], issues: [] }
            : fails("planner")
              ? failed("planner")
              : { type: "planned", plan: { ...plan0, planned_by: "llm" } },
        );
      if (e.type === "effect.planByRules") queue.push({ type: "planned", plan: plan0 });
      if (e.type === "effect.execute") queue.push({ type: "executed", toolRuns: tools(e.plan), truncated: [] });
      if (e.type === "effect.critic")
        queue.push(
          offline
            ? { type: "criticized", critique: null, status: "offline" }
            : fails("critic")
              ? failed("critic")
              : { type: "criticized", critique: null, status: "used" },
        );
      if (e.type === "effect.answer")
        queue.push(fails("answer") ? failed("answer") : o.answer ? o.answer(e) : { type: "answered", choice: null });
      if (e.type === "effect.showDraft") queue.push({ type: "draft.shown" });
    }
  }
  return { snap, effects };
}

const settlements = (date: string) => () => [
  toolRun("S2", "resolve_period_or_asof", "success", dateOut(date)),
  registerRun([settlementRow("cp-a", "ООО «А»", 1000)], { movements: 2, date }),
];

describe("evidence conversation machine", () => {
  it("runs interpret → plan → execute → critic → answer and always records the turn", () => {
    const s0 = getInitialSnapshot(evidenceMachine, { conversationId: "c1" });
    const { snap, effects } = turn(s0, "По каким поставщикам висят хвосты?", settlements("2026-04-10"));
    expect(effectKinds(effects)).toBe("interpret interpretByRules plan planByRules execute critic answer record");
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
    expect(effectKinds(effects)).toBe("interpret interpretByRules critic answer record");
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

  describe("model failures are the machine's events, and it takes the honest way", () => {
    const s0 = () => getInitialSnapshot(evidenceMachine, { conversationId: "c1" });
    const question = "По каким поставщикам висят хвосты?";

    it("online, every model answering: the model steps run, no rule step", () => {
      const { effects, snap } = turn(s0(), question, settlements("2026-04-10"), { offline: false });
      expect(effectKinds(effects)).toBe("interpret plan execute critic answer record");
      expect(snap.context.last?.coverage.critic.model).toBe("used");
    });

    it("an interpreter answering invalid output twice: the rules read the question, marked MODEL_OUTPUT_INVALID if they cannot", () => {
      const read = turn(s0(), question, settlements("2026-04-10"), {
        offline: false,
        fail: ["interpreter"],
        codes: ["invalid_output", "invalid_output"],
      });
      const byRules = read.effects.find((e) => e.type === "effect.interpretByRules");
      expect(byRules).toMatchObject({ modelIssue: "invalid_output" });
      expect(read.effects.map((e) => e.type).slice(0, 3)).toEqual([
        "effect.interpret",
        "effect.interpretByRules",
        "effect.plan",
      ]);
      // A question the rules cannot read either: the scope says which failure it was.
      const unread = turn(s0(), "Что там вообще?", () => [], {
        offline: false,
        fail: ["interpreter"],
        codes: ["invalid_output", "unavailable"],
      });
      expect(unread.snap.context.last?.reasonCodes).toContain("MODEL_OUTPUT_INVALID");
      expect(unread.snap.context.last?.reasonCodes).not.toContain("MODEL_REQUIRED");
      const down = turn(s0(), "Что там вообще?", () => [], { offline: false, fail: ["interpreter"] });
      expect(down.effects.find((e) => e.type === "effect.interpretByRules")).toMatchObject({
        modelIssue: "model_unavailable",
      });
      expect(down.snap.context.last?.reasonCodes).toContain("MODEL_REQUIRED");
      expect(down.snap.context.last?.reasonCodes).not.toContain("MODEL_OUTPUT_INVALID");
    });

    it("offline: each model step fails at once and names no model failure", () => {
      const { effects, snap } = turn(s0(), "Что там вообще?", () => []);
      expect(effects.find((e) => e.type === "effect.interpretByRules")).toMatchObject({ modelIssue: null });
      expect(snap.context.last?.reasonCodes).toContain("MODEL_REQUIRED");
    });

    it("a planner failing: the built-in plan runs; a critic failing: the rules' report stands, noted", () => {
      const { effects, snap } = turn(s0(), question, settlements("2026-04-10"), {
        offline: false,
        fail: ["planner", "critic"],
      });
      expect(effectKinds(effects)).toBe("interpret plan planByRules execute critic answer record");
      const record = effects.at(-1) as Extract<EvidenceEffect, { type: "effect.record" }>;
      expect(record.work.plan?.planned_by).toBe("deterministic");
      expect(snap.context.last?.coverage.critic).toEqual({
        rules: true,
        model: "failed",
        note: "критик-модель не дала валидного ответа (unavailable)",
      });
    });

    it("an answer model failing before any token: the draft is shown instead and is the answer", () => {
      const { effects, snap } = turn(s0(), question, settlements("2026-04-10"), { offline: false, fail: ["answer"] });
      const shown = effects.find((e) => e.type === "effect.showDraft") as Extract<
        EvidenceEffect,
        { type: "effect.showDraft" }
      >;
      expect(shown.text).toBe(snap.context.last?.answer.user_facing_answer);
      expect(effects.map((e) => e.type).slice(-3)).toEqual(["effect.answer", "effect.showDraft", "effect.record"]);
      expect(snap.context.last?.replacement).toBeNull();
      expect(snap.value).toBe("idle");
    });

    it("a model's choice is rendered by the engine: refused parts are left out with their reason, mandatory ones added", () => {
      const { effects, snap } = turn(s0(), question, settlements("2026-04-10"), {
        offline: false,
        answer: (e) => {
          const conclusion = e.menu.claims.find((c) => c.kind === "conclusion")!.id;
          const found = e.menu.engine.found;
          return {
            type: "answered",
            choice: {
              short: [],
              checked: [],
              found: [conclusion, ...found, "C999"],
              not_established: [],
              next_step: [],
            },
          };
        },
      });
      const last = snap.context.last!;
      expect(last.answer.composed_by).toBe("model");
      expect(last.validation?.issues.join("\n")).toMatch(/C\d+ \(conclusion\) не может стоять в этом блоке/);
      expect(last.validation?.issues.join("\n")).toMatch(/«C999» нет в меню/);
      // the conclusion still leads «Коротко»; nothing streamed is replaced
      expect(last.answer.short_answer).toBe(last.answer.claims[0]!.text);
      expect(last.replacement).toBeNull();
      const record = effects.at(-1) as Extract<EvidenceEffect, { type: "effect.record" }>;
      expect(record.work.rejected?.issues).toEqual(last.validation?.issues);
    });

    it("a legacy answered event (prose in the slot contract, logged before the claims menu) replays through its check", () => {
      const legacy = (text: string) => (): EvidenceEvent => ({ type: "answered", text, released: "" });
      const kept = turn(s0(), question, settlements("2026-04-10"), {
        offline: false,
        answer: legacy(
          "**Коротко.** {K0}\n\n**Что проверено.**\n- {P1}\n\n**Что найдено.**\n- {N1}\n\n**Что не удалось установить.**\n- {U1}\n\n**Что уточнить / следующий шаг.**\n- {S1}",
        ),
      });
      expect(kept.snap.context.last?.validation?.ok).toBe(true);
      expect(kept.snap.context.last?.answer.composed_by).toBe("model");
      const lie = turn(s0(), question, settlements("2026-04-10"), {
        offline: false,
        answer: legacy("**Коротко.** Долгов нет."),
      });
      expect(lie.snap.context.last?.validation?.ok).toBe(false);
      expect(lie.snap.context.last?.answer.composed_by).toBe("deterministic");
    });

    it("a log written before the failure events (the handler chose the fallback) replays to the same snapshot", () => {
      // Then: one `interpreted` event carried the rules' reading and the model's failure.
      const text = "Что там вообще?";
      const old: EvidenceEvent[] = [
        { type: "user.message", text, requestId: "r1", offline: false },
        { type: "interpreted", output: null, via: "deterministic", modelIssue: "invalid_output" },
        {
          type: "criticized",
          critique: null,
          status: "failed",
          note: "критик-модель не дала валидного ответа (unavailable)",
        },
        { type: "answered", text: null, released: "" },
      ];
      const now: EvidenceEvent[] = [
        { type: "user.message", text, requestId: "r1", offline: false },
        { type: "model.failed", role: "interpreter", codes: ["invalid_output", "invalid_output"], issues: [] },
        { type: "interpreted", output: null, via: "deterministic" },
        { type: "model.failed", role: "critic", codes: ["unavailable"], issues: ["x"] },
        { type: "model.failed", role: "answer", codes: ["unavailable"], issues: [] },
        { type: "draft.shown" },
      ];
      const run = (events: EvidenceEvent[]) => {
        let s = s0();
        for (const e of events) [s] = transition(evidenceMachine, s, e);
        return evidenceMachine.getPersistedSnapshot(s);
      };
      const a = run(old);
      expect((a as unknown as { value: string }).value).toBe("idle");
      expect(JSON.stringify(a)).toBe(JSON.stringify(run(now)));
    });
  });
});
