import { and, not, setup, stateIn } from "xstate";
import { describe, expect, it } from "vitest";
import { defaultRegistry } from "../../systems/clinic/registry";
import { createClinicDialogueMachine } from "../../systems/clinic/dialogue.machine";
import { stepMachineFor } from "../../systems/clinic/booking-steps.machine";
import { activeStateIds, describeGuard, machineGraph, prettyEvent } from "../../visualizations/graph";

describe("machineGraph: read from machine.root", () => {
  it("the clinic dialogue: generated from the registry, seed 003's decisions as guarded transitions in their order", () => {
    const reg = defaultRegistry();
    const g = machineGraph(createClinicDialogueMachine(reg));
    expect(g.machineId).toBe("clinicDialogue");
    const children = (id: string) => [...g.nodes.values()].filter((n) => n.parent === id).map((n) => n.key);
    expect(children(g.root)).toEqual(["patient", "turn", "handler"]);
    // A state per branch; the stepped branch holds its configured steps and a history state for resume.
    expect(children("clinicDialogue.patient")).toEqual(["unrouted", ...Object.keys(reg.branches)]);
    expect(children("clinicDialogue.patient.new_booking")).toEqual([
      ...reg.stepGraphs.new_booking!.steps.map((s) => s.code),
      "H",
    ]);
    expect(children("clinicDialogue.turn")).toEqual([
      "idle",
      "routing",
      "dispatch",
      "retrieving",
      "calling",
      "afterBranch",
      "failed",
    ]);
    expect(g.nodes.get("clinicDialogue.patient")!.initial).toBe("clinicDialogue.patient.unrouted");
    const routed = g.edges.filter((e) => e.source === "clinicDialogue.patient" && e.event === "router.result");
    expect(routed.slice(0, 3).map((e) => [e.order, e.guard, e.targets])).toEqual([
      [2, "routerResumes(new_booking)", ["clinicDialogue.patient.new_booking.H"]],
      [3, "routerLoopTrips", ["clinicDialogue.patient.escalate_human"]],
      [4, "routerNames(new_booking)", ["clinicDialogue.patient.new_booking"]],
    ]);
    // Sticky hold and soft insertion keep the branch: listed on its node, after the resume and in the seed's order.
    expect(g.nodes.get("clinicDialogue.patient.new_booking")!.internal.map((e) => `${e.event}:${e.guard}`)).toEqual([
      "router.result:routerDisagrees",
      "branch.result:softInsertion",
      "branch.result:stepProposed",
      "branch.result:branchStays",
    ]);
    expect(g.edges.find((e) => e.source.endsWith(".qualify"))!.guard).toBe(
      "and(targets(present), slotGuard(new_booking, qualify, require_legal_rep))",
    );
    expect(g.edges.find((e) => e.event === "operator.release")).toMatchObject({
      source: "clinicDialogue.patient.escalate_human",
      targets: ["clinicDialogue.patient.unrouted"],
    });
    const fromDispatch = g.edges.filter((e) => e.source === "clinicDialogue.turn.dispatch");
    expect(fromDispatch.map((e) => [e.event, e.order, e.guard, e.targets])).toEqual([
      ["always", 0, "turnStopped", ["clinicDialogue.turn.idle"]],
      ["always", 1, "needsKnowledge", ["clinicDialogue.turn.retrieving"]],
      ["always", 2, null, ["clinicDialogue.turn.calling"]],
    ]);
    expect(g.edges.find((e) => e.event === "patient.message")).toMatchObject({
      guard: "redFlag",
      targets: ["clinicDialogue.patient.escalate_human"],
      actions: ["safety"],
    });
  });

  it("the generated step machine follows its configuration: one edge per allowed_next, the guard named", () => {
    const graph = defaultRegistry().stepGraphs.new_booking!;
    const g = machineGraph(stepMachineFor(graph) as never);
    const moves = g.edges.map((e) => `${e.source.split(".").pop()}→${e.targets[0]!.split(".").pop()}`);
    const expected = graph.steps.flatMap((s) =>
      s.allowed_next.filter((n) => n !== s.code).map((n) => `${s.code}→${n}`),
    );
    expect(moves.sort()).toEqual(expected.sort());
    expect(g.edges.find((e) => e.source.endsWith(".qualify"))!.guard).toBe(
      "and(targets(present), slotGuard(qualify, require_legal_rep))",
    );
    // Staying, a blocked guard and a rejected target do not leave the state: listed on the node.
    expect(g.nodes.get(`${g.root}.qualify`)!.internal.map((e) => e.guard)).toEqual([
      "inline",
      "targets(present)",
      null,
    ]);
  });

  it("describes guards of every form", () => {
    expect(describeGuard(undefined)).toBeNull();
    expect(describeGuard("isReady")).toBe("isReady");
    expect(describeGuard({ type: "over", params: { limit: 3 } })).toBe("over(3)");
    expect(describeGuard(and(["a", { type: "b", params: { x: "y" } }]))).toBe("and(a, b(y))");
    expect(describeGuard(and(["only"]))).toBe("only");
    expect(describeGuard(not("a"))).toBe("not(a)");
    expect(describeGuard(stateIn("busy"))).toBe("in(busy)");
    expect(
      describeGuard(function isAdult() {
        return true;
      }),
    ).toBe("isAdult");
    expect(describeGuard(() => true)).toBe("inline");
  });

  it("names engine events the way the config writes them", () => {
    expect(prettyEvent("xstate.done.state.m.b")).toBe("onDone");
    expect(prettyEvent("xstate.after.500.m.a")).toBe("after 500 ms");
    expect(prettyEvent("xstate.error.actor.fetch")).toBe("onError: fetch");
    expect(prettyEvent("go")).toBe("go");
  });

  it("maps a state value to node ids, nested, parallel and with explicit ids", () => {
    const m = setup({}).createMachine({
      id: "m",
      initial: "a",
      states: {
        a: { initial: "x", states: { x: { id: "custom-x" }, y: {} } },
        p: {
          type: "parallel",
          states: { r1: { initial: "u", states: { u: {} } }, r2: { initial: "v", states: { v: {} } } },
        },
      },
    });
    const g = machineGraph(m);
    expect([...activeStateIds(g, { a: "x" })].sort()).toEqual(["custom-x", "m", "m.a"]);
    expect([...activeStateIds(g, { p: { r1: "u", r2: "v" } })].sort()).toEqual([
      "m",
      "m.p",
      "m.p.r1",
      "m.p.r1.u",
      "m.p.r2",
      "m.p.r2.v",
    ]);
    expect([...activeStateIds(g, "nowhere")]).toEqual(["m"]);
  });
});
