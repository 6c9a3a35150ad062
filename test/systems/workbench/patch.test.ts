import { describe, expect, it } from "vitest";
import { applyPatch, dropModelSelections } from "../../../systems/workbench/patch";
import type { Candidate, Plan } from "../../../systems/workbench/types";

const plan: Plan = {
  planVersion: 3,
  plannedBy: "deterministic",
  tasks: [
    {
      id: "task-1",
      intent: "find_entity",
      sourceMode: "domain",
      entityType: "Composition",
      mentions: ["Расчёт скидки"],
      dependsOn: [],
    },
    {
      id: "task-2",
      intent: "inspect_entity",
      sourceMode: "domain",
      entityType: "Composition",
      mentions: ["Расчёт скидки"],
      dependsOn: ["task-1"],
      refersTo: "task-1",
      selection: {
        identity: "composition-x",
        candidateId: "c1",
        clarificationId: "reranker",
        planVersion: 3,
        source: "reranker",
      },
    },
  ],
};
const candidates: Candidate[] = [
  { candidateId: "c1", identity: "composition-discount", displayName: "Расчёт скидки", documentType: "Composition" },
];
const patch = (over: Partial<Parameters<typeof applyPatch>[1]> = {}) => ({
  interactionId: "i1",
  basePlanVersion: 3,
  clarificationId: "q1",
  updates: [{ taskId: "task-1", field: "resolvedEntity" as const, candidateId: "c1" }],
  ...over,
});

describe("scoped patch", () => {
  it("pins the chosen candidate, bumps the version and invalidates dependants", () => {
    const r = applyPatch(plan, patch(), candidates);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan.planVersion).toBe(4);
    expect(r.plan.tasks[0]!.selection).toEqual({
      identity: "composition-discount",
      candidateId: "c1",
      clarificationId: "q1",
      planVersion: 4,
      source: "user",
    });
    expect(r.invalidated).toEqual(["task-2"]);
    expect(r.plan.tasks[1]!.selection).toBeUndefined();
    // the input plan is untouched
    expect(plan.planVersion).toBe(3);
    expect(plan.tasks[0]!.selection).toBeUndefined();
  });
  it("refuses a stale base version and a candidate outside the snapshot", () => {
    expect(applyPatch(plan, patch({ basePlanVersion: 2 }), candidates)).toMatchObject({ ok: false, code: "conflict" });
    expect(
      applyPatch(
        plan,
        patch({ updates: [{ taskId: "task-1", field: "resolvedEntity", candidateId: "c7" }] }),
        candidates,
      ),
    ).toMatchObject({ ok: false, code: "unknown_candidate" });
    expect(
      applyPatch(plan, patch({ updates: [{ taskId: "task-9", field: "mention", value: "x" }] }), candidates),
    ).toMatchObject({ ok: false, code: "unknown_task" });
  });
  it("a mention correction replaces the mention and drops what was pinned to the old one", () => {
    const r = applyPatch(
      plan,
      patch({ updates: [{ taskId: "task-2", field: "mention", value: "Учёт остатков" }] }),
      candidates,
    );
    expect(r.ok && r.plan.tasks[1]).toMatchObject({ mentions: ["Учёт остатков"], dependsOn: [] });
    expect(r.ok && r.plan.tasks[1]!.selection).toBeUndefined();
  });
  it("a workspace change drops the reranker's choices but keeps the user's", () => {
    const r = applyPatch(plan, patch(), candidates);
    const withBoth: Plan = r.ok ? { ...r.plan, tasks: [r.plan.tasks[0]!, plan.tasks[1]!] } : plan;
    const dropped = dropModelSelections(withBoth);
    expect(dropped.tasks[0]!.selection?.source).toBe("user");
    expect(dropped.tasks[1]!.selection).toBeUndefined();
  });
  it("a reranker's choice whose document vanished is kept, so the resolver asks again instead of picking anew", () => {
    const withModel: Plan = {
      ...plan,
      tasks: plan.tasks.map((t, i) =>
        i === 0
          ? {
              ...t,
              selection: {
                identity: "composition-gone",
                candidateId: "c1",
                clarificationId: "reranker",
                planVersion: 1,
                source: "reranker" as const,
              },
            }
          : t,
      ),
    };
    const kept = dropModelSelections(withModel, (id) => id !== "composition-gone");
    expect(kept.tasks[0]!.selection).toMatchObject({ identity: "composition-gone", source: "reranker" });
    expect(dropModelSelections(withModel, () => true).tasks[0]!.selection).toBeUndefined();
  });
});
