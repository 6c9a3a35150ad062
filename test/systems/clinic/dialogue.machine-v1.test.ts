import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import { buildRegistry, defaultRegistry } from "../../../systems/clinic/registry";
import { seedBranches } from "../../../systems/clinic/seed-branches";
import type { ClinicState, Registry, StepGraph } from "../../../systems/clinic/types";
import { replayLog } from "../../../driver/replay";
import { createClinicDialogueMachine } from "../../../systems/clinic/dialogue.machine";
import { migrateClinicDialogue, patientValue } from "../../../systems/clinic/dialogue-restore";
import type { ClinicDialogueMachine } from "../../../systems/clinic/dialogue.machine";

/**
 * Behaviour unchanged across the v1 → v2 rewrite of the clinic dialogue (issue 15 item 3).
 * test/fixtures/clinic-dialogue-v1/conversations.json was written by the v1 machine (commit
 * ef5cb02, random scripted conversations on the seed graph and on random step graphs): per turn
 * the model answers, the events fed, what the turn answered and the persisted v1 snapshot.
 */

type Reply = string | { fail: true };
interface Turn {
  script: { text: string; router: Reply; branch: Reply[]; fragments: unknown[] };
  failed: boolean;
  fed?: unknown[];
  final?: { reply: string; state: ClinicState; events: string[]; notes: string[]; fragments: unknown[] } | null;
  persisted?: { value: unknown; context: { state: ClinicState; turn: null } };
}
interface Conversation {
  graph: StepGraph | null;
  turns: Turn[];
  log: unknown[];
  persisted: Turn["persisted"] | null;
}
const fixture = JSON.parse(
  readFileSync(new URL("../../fixtures/clinic-dialogue-v1/conversations.json", import.meta.url), "utf8"),
) as { machine: string; conversations: Conversation[] };
const RELEASE = "__operator.release__";

const registryOf = (c: Conversation): Registry =>
  c.graph ? buildRegistry(Object.values(seedBranches), [c.graph]) : defaultRegistry();
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** One turn through the v2 machine from a persisted snapshot, effects answered from the script. */
function runTurn(machine: ClinicDialogueMachine, persisted: unknown | null, t: Turn["script"]) {
  let snap = persisted === null ? initialTransition(machine, {})[0] : machine.resolveState(json(persisted) as never);
  const router = [t.router];
  const branch = [...t.branch];
  const queue: unknown[] = [
    t.text === RELEASE ? { type: "operator.release" } : { type: "patient.message", text: t.text },
  ];
  let final: Record<string, unknown> | null = null;
  let failed = false;
  while (queue.length) {
    const [next, actions] = transition(machine, snap, queue.shift() as never);
    snap = next;
    for (const a of actions as { type: string; params?: { event: Record<string, unknown> } }[]) {
      if (a.type !== "xstate.emit") continue;
      const e = a.params!.event;
      const answer = (r: Reply | undefined, type: string) =>
        typeof r === "string" || r === undefined
          ? queue.push({ type, text: r ?? "" })
          : queue.push({ type: "model.failed", role: type.split(".")[0], message: "down" });
      if (e.type === "effect.router") answer(router.shift(), "router.result");
      else if (e.type === "effect.branch") answer(branch.shift(), "branch.result");
      else if (e.type === "effect.retrieve") queue.push({ type: "retrieve.result", fragments: t.fragments });
      else if (e.type === "clinic.final") final = e;
      else if (e.type === "clinic.failed") failed = true;
    }
  }
  return {
    snap,
    final,
    failed,
    persisted: json(machine.getPersistedSnapshot(snap)) as unknown as {
      value: { patient: unknown; turn: string };
      context: { state: ClinicState };
    },
  };
}

const finalOf = (f: Record<string, unknown> | null | undefined) =>
  f ? { reply: f.reply, state: f.state, events: f.events, notes: f.notes, fragments: f.fragments } : null;

describe("clinic dialogue v2 against conversations recorded with v1", () => {
  it("holds enough varied turns to mean something", () => {
    expect(fixture.machine).toBe("clinic-dialogue@1");
    const events = new Set(fixture.conversations.flatMap((c) => c.turns.flatMap((t) => t.final?.events ?? [])));
    for (const e of [
      "sticky",
      "handoff",
      "resumed",
      "loop_guard",
      "red_flag",
      "escalated",
      "transition_rejected",
      "tail_malformed",
      "signal_ignored",
      "soft_insertion",
    ])
      expect(events, e).toContain(e);
    expect(fixture.conversations.length).toBeGreaterThan(150);
  });

  it("answers every turn as v1 did (reply, state, events, notes), and rests where the thread state says", () => {
    let turns = 0;
    for (const [ci, c] of fixture.conversations.entries()) {
      const machine = createClinicDialogueMachine(registryOf(c));
      let persisted: unknown | null = null;
      for (const [ti, t] of c.turns.entries()) {
        const r = runTurn(machine, persisted, t.script);
        expect(r.failed, `conversation ${ci} turn ${ti}: failed`).toBe(t.failed);
        if (t.failed) {
          expect(r.snap.value).toMatchObject({ turn: "failed", handler: "bot" });
          continue;
        }
        expect(finalOf(r.final), `conversation ${ci} turn ${ti}`).toEqual(finalOf(t.final));
        expect(r.persisted.context.state).toEqual(t.persisted!.context.state);
        // Between turns the snapshot says where the patient is, not `idle`.
        expect(r.persisted.value).toEqual({
          patient: patientValue(r.persisted.context.state),
          turn: "idle",
          handler: "bot",
        });
        persisted = r.persisted;
        turns++;
      }
    }
    expect(turns).toBeGreaterThan(700);
  });

  it("migrates every stored v1 snapshot and carries on from it as v1 did", () => {
    let resumed = 0;
    for (const [ci, c] of fixture.conversations.entries()) {
      const machine = createClinicDialogueMachine(registryOf(c));
      for (let from = 0; from < c.turns.length; from++) {
        const stored = c.turns[from]!;
        if (stored.failed) continue;
        const migrated = migrateClinicDialogue(json(stored.persisted), 1) as {
          value: unknown;
          context: { state: ClinicState };
        };
        expect(migrated.value).toEqual({
          patient: patientValue(stored.persisted!.context.state),
          turn: "idle",
          handler: "bot",
        });
        let persisted: unknown = migrated;
        for (let i = from + 1; i < c.turns.length; i++) {
          const t = c.turns[i]!;
          const r = runTurn(machine, persisted, t.script);
          if (t.failed) continue;
          expect(finalOf(r.final), `conversation ${ci}: from turn ${from}, turn ${i}`).toEqual(finalOf(t.final));
          persisted = r.persisted;
          if (r.final && (r.final.events as string[]).includes("resumed")) resumed++;
        }
      }
    }
    // Resumes after a migration go through the history state the migration wrote.
    expect(resumed).toBeGreaterThan(10);
  });

  it("replays a v1 event log through v2 to the migrated stored snapshot", () => {
    for (const [ci, c] of fixture.conversations.entries()) {
      if (!c.persisted || c.log.length === 0) continue;
      const machine = createClinicDialogueMachine(registryOf(c));
      const r = replayLog(
        c.log.map((event) => ({ event, machine: "clinic-dialogue@1" })),
        () => machine,
      );
      expect(r.ok, `conversation ${ci}`).toBe(true);
      const replayed = (r as { snapshot: { value: unknown; context: unknown } }).snapshot;
      const migrated = migrateClinicDialogue(json(c.persisted), 1) as { value: unknown; context: unknown };
      expect({ value: replayed.value, context: replayed.context }, `conversation ${ci}`).toEqual({
        value: migrated.value,
        context: migrated.context,
      });
    }
  });

  it("refuses a version it does not know", () => {
    expect(() => migrateClinicDialogue({}, 7)).toThrow(/no migration from version 7/);
  });
});
