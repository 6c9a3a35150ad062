import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../utils/db";
import { startTestServer } from "../utils/server";
import { eventsNamed, postSse } from "../utils/sse";
import { workspace } from "../systems/workbench/fixtures";

/**
 * DESIGN principle 2 on stored data: every machine snapshot of a conversation is rebuilt from its
 * event log through the pure machine that took the events, and equals what the driver stored.
 * The offline model provider answers (deterministic), so the logs hold real effect results.
 */
const t = useTestDatabase();
let server: Awaited<ReturnType<typeof startTestServer>>;
const A = { authorization: "Bearer tok-a", "content-type": "application/json" };
const B = { authorization: "Bearer tok-b", "content-type": "application/json" };

beforeAll(async () => {
  server = await startTestServer({ db: t.db, tokens: "a:tok-a,b:tok-b", env: { RUN_DETACH_GRACE_MS: "0" } });
});
afterAll(async () => {
  await server?.stop();
});

type Replay = { conversationId: string; machines: { key: string; machineId: string; events: number; definitions: (string | null)[]; replayed: boolean; matches: boolean | null; reason?: string; log?: unknown[]; stored?: unknown; replayedSnapshot?: unknown }[] };
const replay = async (id: string, key?: string, headers = A) => {
  const r = await fetch(`${server.url}/v1/conversations/${id}/replay${key ? `?key=${encodeURIComponent(key)}` : ""}`, { headers });
  return { status: r.status, body: (await r.json()) as Replay };
};
const post = async (path: string, body: object, headers = A) => {
  const r = await postSse(`${server.url}${path}`, body, headers);
  expect(eventsNamed(r, "done")).toHaveLength(1);
  return r;
};

describe("GET /v1/conversations/{id}/replay", () => {
  it("clinic: the dialogue replays from its log, across a settings edit between turns", async () => {
    const { threadId } = (await (await fetch(`${server.url}/v1/clinic/threads`, { method: "POST", headers: A, body: "{}" })).json()) as { threadId: string };
    await post(`/v1/clinic/threads/${threadId}/messages`, { text: "Здравствуйте, хочу записаться к ЛОРу" });
    await post(`/v1/clinic/threads/${threadId}/messages`, { text: "Меня зовут Анна" });
    const edit = await fetch(`${server.url}/v1/clinic/branches/general_info/versions`, { method: "POST", headers: A, body: JSON.stringify({ config: { system_prompt: "Ты — справочная клиники (версия 2)." } }) });
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
    await t.db.sql`update machine_snapshots set snapshot = jsonb_set(snapshot, '{context,state,slots,name}', '"Не Анна"') where key = ${threadId}`;
    const tampered = (await replay(threadId, threadId)).body.machines[0]!;
    expect(tampered).toMatchObject({ replayed: true, matches: false });
    expect((tampered.log as unknown[])[0]).toMatchObject({ seq: 1, event: { type: "xstate.init" } });
  });

  it("evidence and workbench machines replay too, clarifications included", async () => {
    const { conversationId: ev } = (await (await fetch(`${server.url}/v1/evidence/conversations`, { method: "POST", headers: A, body: "{}" })).json()) as { conversationId: string };
    await post(`/v1/evidence/conversations/${ev}/messages`, { text: "Сколько заказов было в марте?" });
    const evidence = (await replay(ev)).body.machines;
    expect(evidence).toEqual([expect.objectContaining({ machineId: "evidence-conversation", replayed: true, matches: true })]);

    const { conversationId: wb } = (await (await fetch(`${server.url}/v1/workbench/conversations`, { method: "POST", headers: A, body: "{}" })).json()) as { conversationId: string };
    const r = await post(`/v1/workbench/conversations/${wb}/messages`, { text: "Покажи композицию «Расчёт скидки»", workspace });
    const q = eventsNamed(r, "clarification_required")[0] as { id: string; interactionId: string; candidates: { candidateId: string }[] };
    expect(q).toBeDefined();
    await post(`/v1/workbench/conversations/${wb}/messages`, { text: "первую", workspace, interactionId: q.interactionId, replyToClarificationId: q.id, selectedCandidateId: q.candidates[0]!.candidateId });
    const machines = (await replay(wb)).body.machines;
    expect(machines.map((m) => m.machineId).sort()).toEqual(["clarification", "interaction"]);
    for (const m of machines) expect(m, m.key).toMatchObject({ replayed: true, matches: true });
  });

  it("is the tenant's own: another tenant's conversation and an unknown key are 404", async () => {
    const { threadId } = (await (await fetch(`${server.url}/v1/clinic/threads`, { method: "POST", headers: A, body: "{}" })).json()) as { threadId: string };
    expect((await replay(threadId, undefined, B)).status).toBe(404);
    expect((await replay(threadId, "nope")).status).toBe(404);
    // No turn yet: nothing to replay.
    expect((await replay(threadId)).body.machines).toEqual([]);
  });
});
