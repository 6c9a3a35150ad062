import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { appendMachineEvents } from "../../storage/machine-events";
import { saveSnapshot } from "../../storage/snapshots";
import { clinicApi } from "../utils/clinic-api";
import { useTestServer } from "../utils/server";
import { eventsNamed, postSse } from "../utils/sse";
import { workspace } from "../systems/workbench/fixtures";

/**
 * DESIGN principle 2 on stored data: every machine snapshot of a conversation is rebuilt from its
 * event log through the pure machine that took the events, and equals what the driver stored.
 * The offline model provider answers (deterministic), so the logs hold real effect results.
 */
const A = { authorization: "Bearer tok-a", "content-type": "application/json" };
const B = { authorization: "Bearer tok-b", "content-type": "application/json" };

const server = useTestServer({ tokens: "a:tok-a,b:tok-b", env: { RUN_DETACH_GRACE_MS: "0" } });

type Replay = {
  conversationId: string;
  machines: {
    key: string;
    machineId: string;
    events: number;
    definitions: (string | null)[];
    replayed: boolean;
    matches: boolean | null;
    reason?: string;
    log?: unknown[];
    stored?: unknown;
    replayedSnapshot?: unknown;
  }[];
};
const newThread = () => clinicApi(server, "tok-a").newThread();
const replay = async (id: string, key?: string, headers = A) => {
  const r = await fetch(`${server.url}/v1/conversations/${id}/replay${key ? `?key=${encodeURIComponent(key)}` : ""}`, {
    headers,
  });
  return { status: r.status, body: (await r.json()) as Replay };
};
const post = async (path: string, body: object, headers = A) => {
  const r = await postSse(`${server.url}${path}`, body, headers);
  expect(eventsNamed(r, "done")).toHaveLength(1);
  return r;
};

describe("GET /v1/conversations/{id}/replay", () => {
  it("clinic: the dialogue replays from its log, across a settings edit between turns", async () => {
    const threadId = await newThread();
    await post(`/v1/clinic/threads/${threadId}/messages`, { text: "Здравствуйте, хочу записаться к ЛОРу" });
    await post(`/v1/clinic/threads/${threadId}/messages`, { text: "Меня зовут Анна" });
    const edit = await fetch(`${server.url}/v1/clinic/branches/general_info/versions`, {
      method: "POST",
      headers: A,
      body: JSON.stringify({ config: { system_prompt: "Ты — справочная клиники (версия 2)." } }),
    });
    expect(edit.status).toBe(201);
    await post(`/v1/clinic/threads/${threadId}/messages`, { text: "А сколько стоит приём?" });

    const { status, body } = await replay(threadId);
    expect(status).toBe(200);
    const dialogue = body.machines.find((m) => m.key === threadId)!;
    expect(dialogue).toMatchObject({ machineId: "clinic-dialogue", replayed: true, matches: true });
    // Turns before and after the edit ran on two generated definitions; the log names both.
    expect(dialogue.definitions).toHaveLength(2);
    expect(dialogue.definitions.every((d) => d!.startsWith("clinic-dialogue@"))).toBe(true);
    expect(dialogue.events).toBeGreaterThanOrEqual(1 + 3 * 3); // init + per turn: message, router result, branch result (+ retrieval)

    // A snapshot changed behind the machine's back no longer matches its log.
    await server.db
      .sql`update machine_snapshots set snapshot = jsonb_set(snapshot::jsonb, '{context,state,slots,name}', '"Не Анна"') where key = ${threadId}`;
    const tampered = (await replay(threadId, threadId)).body.machines[0]!;
    expect(tampered).toMatchObject({ replayed: true, matches: false });
    expect((tampered.log as unknown[])[0]).toMatchObject({ seq: 1, event: { type: "xstate.init" } });
  });

  it("evidence and workbench machines replay too, clarifications included", async () => {
    const { conversationId: ev } = (await (
      await fetch(`${server.url}/v1/evidence/conversations`, { method: "POST", headers: A, body: "{}" })
    ).json()) as { conversationId: string };
    await post(`/v1/evidence/conversations/${ev}/messages`, { text: "Сколько заказов было в марте?" });
    const evidence = (await replay(ev)).body.machines;
    expect(evidence).toEqual([
      expect.objectContaining({ machineId: "evidence-conversation", replayed: true, matches: true }),
    ]);

    const { conversationId: wb } = (await (
      await fetch(`${server.url}/v1/workbench/conversations`, { method: "POST", headers: A, body: "{}" })
    ).json()) as { conversationId: string };
    const r = await post(`/v1/workbench/conversations/${wb}/messages`, {
      text: "Покажи композицию «Расчёт скидки»",
      workspace,
    });
    const q = eventsNamed(r, "clarification_required")[0] as {
      id: string;
      interactionId: string;
      candidates: { candidateId: string }[];
    };
    expect(q).toBeDefined();
    await post(`/v1/workbench/conversations/${wb}/messages`, {
      text: "первую",
      workspace,
      interactionId: q.interactionId,
      replyToClarificationId: q.id,
      selectedCandidateId: q.candidates[0]!.candidateId,
    });
    const machines = (await replay(wb)).body.machines;
    // The question is a child state of its Interaction: one machine, one log.
    expect(machines.map((m) => m.machineId).sort()).toEqual(["interaction"]);
    for (const m of machines) expect(m, m.key).toMatchObject({ replayed: true, matches: true });
  });

  it("is the tenant's own: another tenant's conversation and an unknown key are 404", async () => {
    const threadId = await newThread();
    expect((await replay(threadId, undefined, B)).status).toBe(404);
    expect((await replay(threadId, "nope")).status).toBe(404);
    // No turn yet: nothing to replay.
    expect((await replay(threadId)).body.machines).toEqual([]);
  });
});

describe("a clinic thread stored by clinic-dialogue v1 (before the v2 statechart)", () => {
  /** A v1 conversation of test/fixtures/clinic-dialogue-v1: a booking suspended at a step while the patient asks about prices. */
  const fixture = JSON.parse(
    readFileSync(new URL("../fixtures/clinic-dialogue-v1/conversations.json", import.meta.url), "utf8"),
  ) as {
    conversations: {
      graph: unknown;
      log: unknown[];
      persisted: {
        context: { state: { activeBranch: string; suspended: { intent: string; step: string } | null } };
      } | null;
    }[];
  };
  const stored = fixture.conversations.find(
    (c) =>
      !c.graph &&
      c.persisted?.context.state.activeBranch === "price_question" &&
      c.persisted.context.state.suspended?.intent === "new_booking",
  )!;

  it("replays its v1 log through v2 to its migrated snapshot, migrates on the next turn and still replays", async () => {
    expect(stored).toBeDefined();
    // The tenant's settings versions, as a turn logs them.
    const seedThread = await newThread();
    await post(`/v1/clinic/threads/${seedThread}/messages`, { text: "Здравствуйте" });
    const label = (
      await server.db.sql<
        { machine: string }[]
      >`select machine from machine_events where conversation_id = ${seedThread} and snapshot_key = '' limit 1`
    )[0]?.machine;
    expect(label).toMatch(/^clinic-dialogue@4\|/);

    // What a v1 server left behind: the v1 snapshot and its v1-labelled event log.
    const threadId = await newThread();
    await saveSnapshot(server.db.sql, {
      key: threadId,
      conversationId: threadId,
      machineId: "clinic-dialogue",
      machineVersion: 1,
      snapshot: stored.persisted,
      expectedRowVersion: null,
    });
    await appendMachineEvents(server.db.sql, threadId, threadId, stored.log, null, label!.replace("@4|", "@1|"));
    const before = (await replay(threadId, threadId)).body.machines[0]!;
    expect(before).toMatchObject({ machineVersion: 1, replayed: true, matches: true });
    expect((before.replayedSnapshot as { value: unknown }).value).toEqual({
      patient: "price_question",
      turn: "idle",
      handler: "bot",
    });

    // The thread state the contract shows is the v1 one; the next turn restores through the migration.
    const state = (await (await fetch(`${server.url}/v1/clinic/threads/${threadId}`, { headers: A })).json()) as {
      state: { suspended: { intent: string; step: string } };
    };
    expect(state.state.suspended).toEqual(stored.persisted!.context.state.suspended);
    const r = await post(`/v1/clinic/threads/${threadId}/messages`, { text: "Сколько стоит приём терапевта?" });
    expect(eventsNamed(r, "final")).toHaveLength(1);
    const [row] = await server.db.sql<
      {
        machine_version: number;
        snapshot: {
          value: { patient: unknown; turn: string };
          context: { state: { activeBranch: string; step: string | null } };
        };
      }[]
    >`
      select machine_version, snapshot from machine_snapshots where key = ${threadId}`;
    expect(row!.machine_version).toBe(4);
    const s = row!.snapshot.context.state;
    expect(row!.snapshot.value).toEqual({
      patient: s.step ? { [s.activeBranch]: s.step } : s.activeBranch,
      turn: "idle",
      handler: "bot",
    });
    const after = (await replay(threadId, threadId)).body.machines[0]!;
    expect(after).toMatchObject({ machineVersion: 4, replayed: true, matches: true });
    expect(after.definitions).toEqual([label!.replace("@4|", "@1|"), label]);
  });
});
