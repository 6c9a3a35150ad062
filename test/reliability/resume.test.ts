import { describe, expect, it } from "vitest";
import { createConversation } from "../../storage/conversations";
import {
  appendRunEvents,
  failAbandonedRuns,
  getRun,
  insertRun,
  listRunEvents,
  MAX_RUN_EVENTS,
  type RunEventRow,
} from "../../storage/runs";
import { useTestServer } from "../utils/server";
import { readSse } from "../utils/sse";
import { uuidv7 } from "../../storage/time-ordered-id";
import { fixedUuid } from "../utils/ids";

/** The dead process that owned the runs (a UUID, as a server's instance id). */
const DEAD = fixedUuid(0xdd);

/**
 * Resuming a run whose process died: the dead process streamed events it never stored, so a
 * client may hold a Last-Event-ID beyond — or colliding with — what the database has. It must
 * still get `error` then `done`, numbered past any id the dead process could have sent
 * (MAX_RUN_EVENTS), and never hang.
 */
const E = MAX_RUN_EVENTS + 1;

/** What recovery appends after the stored events, whatever they were: error, then done. */
const ENDING = [
  [E, "error"],
  [E + 1, "done"],
];

const server = useTestServer();

/** A run of the dead process in a new conversation, with the events `events(id)` stored. */
async function storedRun(events: (id: string) => RunEventRow[]): Promise<string> {
  const conv = await createConversation(server.db.sql, "default", "test");
  const id = uuidv7();
  await insertRun(server.db.sql, { id, conversationId: conv.id, tenantId: "default", kind: "test", owner: DEAD });
  await appendRunEvents(server.db.sql, id, events(id));
  return id;
}

/** A run that died after storing `stored` events; recovery closes it as the server would. */
async function deadRun(stored: number): Promise<string> {
  const id = await storedRun((id) => [
    { seq: 1, event: "run_started", data: { runId: id } },
    ...Array.from({ length: stored - 1 }, (_, i) => ({ seq: i + 2, event: "token", data: { delta: `t${i}` } })),
  ]);
  expect(await failAbandonedRuns(server.db.sql, { staleAfterMs: 0, ownerIs: DEAD })).toEqual([id]);
  return id;
}

async function resume(runId: string, lastEventId: number) {
  const res = await fetch(`${server.url}/v1/runs/${runId}/events`, {
    headers: { "last-event-id": String(lastEventId) },
    signal: AbortSignal.timeout(10_000),
  });
  // A finished run with nothing after Last-Event-ID is 204 (an EventSource stops there).
  if (res.status === 204) return [];
  expect(res.status).toBe(200);
  return (await readSse(res)).events.map((e) => [Number(e.id), e.event]);
}

describe("resuming a run whose process died", () => {
  it("recovery stores the ending in one statement: failed, abandoned, error then done after the stored events", async () => {
    const id = await deadRun(3);
    expect(await getRun(server.db.sql, id)).toMatchObject({
      status: "failed",
      errorCode: "internal",
      outcome: "abandoned",
    });
    expect((await listRunEvents(server.db.sql, id, 0)).map((e) => [e.seq, e.event])).toEqual([
      [1, "run_started"],
      [2, "token"],
      [3, "token"],
      ...ENDING,
    ]);
  });

  it("a client behind the stored events gets the rest, then error and done", async () => {
    const id = await deadRun(3);
    expect(await resume(id, 1)).toEqual([[2, "token"], [3, "token"], ...ENDING]);
  });

  it("a client that saw more than was stored gets error and done", async () => {
    const id = await deadRun(3);
    expect(await resume(id, 9)).toEqual(ENDING);
  });

  it("a client that saw exactly one or two events more than were stored (the ids a naive ending would take) gets error and done", async () => {
    for (const seen of [2, 3]) {
      const id = await deadRun(1);
      // The client saw run_started (1) and tokens live; the database has run_started only.
      expect(await resume(id, seen)).toEqual(ENDING);
      // Having the ending, it gets nothing more (204), by id alone.
      expect(await resume(id, E + 1)).toEqual([]);
    }
  });

  it("a client that already has `done` of a finished run gets nothing more, and the stream ends", async () => {
    const id = await deadRun(2);
    const all = await resume(id, 0);
    expect(all.at(-1)).toEqual([E + 1, "done"]);
    const ok = await storedRun(() => [
      { seq: 1, event: "run_started", data: {} },
      { seq: 2, event: "final", data: {} },
      { seq: 3, event: "done", data: {} },
    ]);
    await server.db.sql`update runs set status = 'completed' where id = ${ok}`;
    expect(await resume(ok, 3)).toEqual([]);
    expect((await fetch(`${server.url}/v1/runs/${ok}/events`, { headers: { "last-event-id": "3" } })).status).toBe(204);
    expect(await resume(ok, 1)).toEqual([
      [2, "final"],
      [3, "done"],
    ]);
  });
});
