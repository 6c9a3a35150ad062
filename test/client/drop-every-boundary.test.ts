import { describe, expect, it } from "vitest";
import { createClient, type Turn, type UntypedEvent } from "../../client";
import { listRunEvents } from "../../storage/runs";
import { onServer } from "../utils/db";
import { useTestServer } from "../utils/server";
import { cuttingFetch } from "./cutting-fetch";

/**
 * issue 16, done-when: the connection drops at every event boundary of a clinic turn and of a
 * Workbench turn (before the first byte, after each event, right before `done`); the client
 * retries (re-POST with its Idempotency-Key before it knows the run, Last-Event-ID after).
 * Every turn is stored exactly once and the client ends with exactly the stored events, in order.
 * The offline model provider answers (deterministic, no model server needed).
 */

const server = useTestServer({ env: { RUN_DETACH_GRACE_MS: "5000" } });

const cutter = cuttingFetch();
const client = () => createClient({ baseUrl: server.url, fetch: cutter.fetch, retryDelayMs: 20 });

/** Sends with a cut after `cut` events; returns what the client got and what the server stored. */
async function cutTurn<E extends UntypedEvent>(start: () => Turn<E>, cut: number | null) {
  if (cut !== null) cutter.cutNext(cut);
  const turn = start();
  const got: E[] = [];
  for await (const e of turn) got.push(e);
  expect(turn.runId).toBeTruthy();
  const stored = await listRunEvents(server.db.sql, turn.runId!, 0);
  return { turn, got: got.map((e) => [e.id, e.event, e.data]), stored: stored.map((e) => [e.seq, e.event, e.data]) };
}

async function everyBoundary<E extends UntypedEvent>(conversationId: string, start: (i: number) => Turn<E>) {
  // An uncut turn first: its event count is the number of boundaries to cut at.
  const first = await cutTurn(() => start(0), null);
  expect(first.got).toEqual(first.stored);
  const n = first.got.length;
  expect(first.got.at(-1)?.[1]).toBe("done");
  const runIds = [first.turn.runId!];
  for (let cut = 0; cut < n; cut++) {
    const r = await cutTurn(() => start(cut + 1), cut);
    expect(r.turn.connections, `cut after ${cut} events`).toBeGreaterThanOrEqual(2);
    expect(r.got, `cut after ${cut} events`).toEqual(r.stored);
    expect(r.got.map((e) => e[0])).toEqual(r.got.map((_, i) => i + 1));
    expect(r.got.at(-1)?.[1]).toBe("done");
    expect(r.got.some((e) => e[1] === "final" || e[1] === "clarification_required")).toBe(true);
    runIds.push(r.turn.runId!);
  }
  // Exactly once: one run per send, all completed, one user message per send.
  const runs = await server.db.sql<
    { id: string; status: string }[]
  >`select id, status from runs where conversation_id = ${conversationId} order by created_at`;
  expect(runs.map((r) => r.id)).toEqual(runIds);
  expect(runs.every((r) => r.status === "completed")).toBe(true);
  const users = await server.db.sql<
    { n: number }[]
  >`select count(*)::int as n from messages where conversation_id = ${conversationId} and role = 'user'`;
  expect(users[0]!.n).toBe(n + 1);
  return n;
}

describe(`a retrying client, the connection dropped at every event boundary (${onServer ? "PostgreSQL server" : "PGlite"})`, () => {
  it("clinic turn: stored once, the client has exactly the stored events", async () => {
    const c = client();
    const { threadId } = await c.clinic.create();
    const n = await everyBoundary(threadId, (i) => c.clinic.send(threadId, `Какие у вас часы работы? (${i})`));
    expect(n).toBeGreaterThanOrEqual(4);
    console.log(`events per turn: ${n}, cuts so far: ${cutter.cuts}`);
  }, 120_000);

  it("Workbench turn: stored once, the client has exactly the stored events", async () => {
    const c = client();
    const { conversationId } = await c.workbench.create();
    const n = await everyBoundary(conversationId, (i) =>
      c.workbench.send(conversationId, { text: `Какие есть композиции? (${i})` }),
    );
    expect(n).toBeGreaterThanOrEqual(4);
    console.log(`events per turn: ${n}, cuts so far: ${cutter.cuts}`);
  }, 120_000);
});
