import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { blockedGuards } from "../../../systems/clinic/guards";
import { buildRegistry, defaultRegistry, stepSpec } from "../../../systems/clinic/registry";
import { seedBranches } from "../../../systems/clinic/seed-branches";
import { branchCodes, HANDOFF_CAP } from "../../../systems/clinic/types";
import type { ClinicState, Registry, StepGraph } from "../../../systems/clinic/types";
import { patientValue } from "../../../systems/clinic/dialogue-restore";
import { createRunner } from "./runner";
import type { Reply } from "./runner";

/**
 * Invariants of seed 003 under arbitrary router and branch outputs (including garbage, skipped
 * steps, forged tails and failures), on the seed's booking graph and on random step graphs.
 */

const SLOT_KEYS = [
  "name",
  "reason",
  "specialist",
  "preferred_time",
  "confirmed",
  "is_child",
  "legal_rep_name",
  "legal_rep_phone",
  "x",
];
const words = fc
  .array(
    fc.constantFrom(
      "Здравствуйте",
      "как",
      "вас",
      "зовут",
      "запись",
      "2500",
      "рублей",
      "[скобки]",
      "`код`",
      "{json}",
      "State",
      "INTENT",
      "—",
      "?",
      "\n",
    ),
    { maxLength: 8 },
  )
  .map((w) => w.join(" "));
const slotValue = fc.oneof(
  fc.constant(true),
  fc.constant(false),
  fc.constant(null),
  fc.constant(""),
  fc.constantFrom("Алексей", "+7 900", "завтра"),
);
const slots = fc.dictionary(fc.constantFrom(...SLOT_KEYS), slotValue, { maxKeys: 4 });

function branchOutput(steps: string[]) {
  const target = fc.constantFrom(...steps, "bogus", "close");
  const stateJson = fc.record(
    { state_after: target, slots_updated: slots, soft_insertion: fc.boolean() },
    { requiredKeys: ["state_after"] },
  );
  const tail = fc.oneof(
    fc.constant(""),
    stateJson.map((s) => `\nSTATE_JSON: ${JSON.stringify(s)}`),
    stateJson.map((s) => `\n\`\`\`json\nSTATE_JSON: ${JSON.stringify(s)}\n\`\`\``),
    fc.constant('\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {"name": '),
    fc
      .tuple(
        fc.constantFrom(...branchCodes, "nonsense"),
        fc.option(fc.constantFrom("surgery", "acute_pain", "angry", "explicit_request", "whatever")),
      )
      .map(([c, r]) => `[INTENT_CHANGE: ${c}${r ? `|${r}` : ""}]`),
  );
  return fc.tuple(words, tail).map(([w, t]) => w + t);
}

const routerOutput = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...branchCodes) },
  { weight: 1, arbitrary: fc.constantFrom(...branchCodes).map((c) => JSON.stringify({ intent: c })) },
  { weight: 1, arbitrary: fc.constantFrom("", "не знаю", '{"intent": "spam"}', "price_question или general_info") },
);

function turnArb(steps: string[]) {
  return fc.record({
    router: fc.oneof(
      { weight: 12, arbitrary: routerOutput.map((r): Reply => r) },
      { weight: 1, arbitrary: fc.constant<Reply>({ fail: true }) },
    ),
    branch: fc.array(
      fc.oneof(
        { weight: 12, arbitrary: branchOutput(steps).map((b): Reply => b) },
        { weight: 1, arbitrary: fc.constant<Reply>({ fail: true }) },
      ),
      { minLength: 1, maxLength: 4 },
    ),
  });
}

function checkTurn(
  reg: Registry,
  prev: ClinicState,
  next: ClinicState,
  events: string[],
  reply: string,
  calls: { branch: number },
) {
  // No service tail reaches the patient.
  expect(reply).not.toMatch(/STATE_JSON|INTENT_CHANGE/i);
  expect(reply.length).toBeGreaterThan(0);
  // At most 3 counted switches; every change of branch is counted, a resume, the first entry or the loop guard.
  expect(next.handoffCount).toBeLessThanOrEqual(HANDOFF_CAP);
  if (next.activeBranch !== prev.activeBranch) {
    const explained =
      prev.activeBranch === null ||
      events.includes("resumed") ||
      events.includes("loop_guard") ||
      next.handoffCount > prev.handoffCount;
    expect(explained, `unexplained switch ${prev.activeBranch} → ${next.activeBranch} [${events}]`).toBe(true);
  }
  if (events.includes("loop_guard")) {
    expect(next).toMatchObject({ activeBranch: "escalate_human", escalationReason: "routing_loop" });
    // Tripped by the router's switch (not by a branch's signal): the template, with no branch call at all.
    const d = next.routerDecision;
    const routerSwitch =
      prev.activeBranch !== null &&
      d !== null &&
      d !== prev.activeBranch &&
      d !== prev.suspended?.intent &&
      !reg.stepGraphs[prev.activeBranch];
    if (prev.handoffCount === HANDOFF_CAP && routerSwitch) expect(calls.branch).toBe(0);
  }
  if (events.includes("escalated")) expect(next.activeBranch).toBe("escalate_human");
  // Step and slots belong to stepped branches only, and the step exists in the graph.
  const graph = next.activeBranch ? reg.stepGraphs[next.activeBranch] : undefined;
  if (!graph) {
    expect(next.step).toBeNull();
    expect(next.slots).toEqual({});
  } else expect(graph.steps.map((s) => s.code)).toContain(next.step);
  // Within one branch (no switch this turn): no skipped step and no bypassed guard.
  const sameBranch =
    next.activeBranch === prev.activeBranch &&
    !events.some((e) => e === "handoff" || e === "resumed" || e === "loop_guard");
  if (sameBranch && graph && prev.step !== null && next.step !== prev.step) {
    const from = stepSpec(reg, prev.activeBranch, prev.step)!;
    expect(from.allowed_next, `skip ${prev.step} → ${next.step}`).toContain(next.step);
    expect(blockedGuards(from, next.slots), `guard bypassed leaving ${prev.step}`).toEqual([]);
  }
  if (events.some((e) => e.startsWith("guard_blocked:")) || events.includes("transition_rejected")) {
    if (sameBranch) expect(next.step).toBe(prev.step);
  }
  if (events.includes("soft_insertion")) expect(next.softInsertionCount).toBeGreaterThan(0);
}

function runProperty(reg: Registry, steps: string[], numRuns: number) {
  fc.assert(
    fc.property(fc.array(turnArb(steps), { minLength: 1, maxLength: 12 }), (turns) => {
      const run = createRunner(reg);
      for (const [i, t] of turns.entries()) {
        const prev = run.state;
        const before = run.persisted;
        const r = run.turn(`реплика ${i}`, { router: [t.router], branch: t.branch });
        if (!r.ok) {
          // A failed turn leaves no trace: the snapshot is exactly the one before.
          expect(run.persisted).toBe(before);
          continue;
        }
        checkTurn(reg, prev, r.state, r.events, r.reply, r.calls);
        // Between turns the statechart rests where the thread state says: branch, step, idle turn.
        expect(JSON.parse(r.persisted).value).toEqual({ patient: patientValue(r.state), turn: "idle", handler: "bot" });
        expect(r.calls.branch).toBeLessThanOrEqual(3);
      }
    }),
    { numRuns },
  );
}

/** Random step graphs: nothing about the seed's six steps may be assumed by the machine. */
const graphArb = fc.integer({ min: 2, max: 6 }).chain((n) => {
  const codes = Array.from({ length: n }, (_, i) => `s${i}`);
  return fc
    .tuple(
      fc.array(fc.subarray(codes), { minLength: n, maxLength: n }),
      fc.array(
        fc.option(
          fc.record({
            trigger: fc.option(fc.constantFrom(...SLOT_KEYS)),
            required: fc.subarray(SLOT_KEYS, { minLength: 1, maxLength: 2 }),
          }),
        ),
        { minLength: n, maxLength: n },
      ),
    )
    .map(([next, guards]): StepGraph => ({
      branch: "new_booking",
      version: 1,
      steps: codes.map((code, i) => ({
        code,
        title: "",
        prompt: `шаг ${code}`,
        question: `вопрос ${code}?`,
        allowed_next: next[i]!,
        guards: guards[i]
          ? {
              [`g_${code}`]: {
                description: "",
                required_slots: guards[i]!.required,
                ...(guards[i]!.trigger ? { trigger_slot: guards[i]!.trigger!, trigger_value: true } : {}),
              },
            }
          : {},
      })),
    }));
});

describe("clinic dialogue invariants (fast-check)", () => {
  it("hold on the seed booking graph for random router and branch outputs", () => {
    runProperty(defaultRegistry(), ["intro", "qualify", "present", "offer_time", "book", "close"], 300);
  });

  it("hold on random step graphs generated from configuration", () => {
    fc.assert(
      fc.property(graphArb, (graph) => {
        const reg = buildRegistry(Object.values(seedBranches), [graph]);
        runProperty(
          reg,
          graph.steps.map((s) => s.code),
          15,
        );
      }),
      { numRuns: 20 },
    );
  });
});
