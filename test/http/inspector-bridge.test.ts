import { afterAll, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { postSse, readSse, type SseEvent } from "../utils/sse";
import { listMachineEvents } from "../../storage/machine-events";

/**
 * STATELY_INSPECT=true: the machine events every turn logs become @statelyai/inspect events on
 * /v1/inspect/events — one @xstate.event (and the snapshot it led to) per logged event — per tenant. (Each vitest file runs in its own process, so the flag stays in this file.)
 */

process.env.STATELY_INSPECT = "true";
// No timed reads within the test: only the run waker can wake the bridge.
process.env.STATELY_INSPECT_FALLBACK_MS = "600000";

const A = { authorization: "Bearer tok-a" };

const server = useTestServer({ llm: true, tokens: "a:tok-a,b:tok-b" });
const llm = server.llm;
afterAll(async () => {
  delete process.env.STATELY_INSPECT;
  delete process.env.STATELY_INSPECT_FALLBACK_MS;
});

type Insp = {
  type: string;
  sessionId: string;
  snapshot?: { value: unknown };
  definition?: string;
  event?: { type: string };
};

function follow(token: string, until: (all: Insp[]) => boolean, ms = 8_000) {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), ms);
  return fetch(`${server.url}/v1/inspect/events?access_token=${token}`, { signal: ctrl.signal })
    .then((res) =>
      readSse(res, { stopAfter: (_e: SseEvent, all: SseEvent[]) => until(all.map((x) => x.data as Insp)) }),
    )
    .then((r) => r.events.map((e) => e.data as Insp))
    .catch(() => [] as Insp[])
    .finally(() => clearTimeout(timer));
}

describe("Stately inspector bridge", () => {
  it("reports each thread as an actor of the dialogue machine and of its step machine, then its turns as snapshots; only to its tenant", async () => {
    const { threadId } = (await (
      await fetch(`${server.url}/v1/clinic/threads`, { method: "POST", headers: A })
    ).json()) as { threadId: string };
    const steps = `${threadId}/steps-new_booking`;
    const seenA = follow("tok-a", (all) => all.some((e) => e.type === "@xstate.snapshot" && e.sessionId === steps));
    const seenB = follow("tok-b", () => false, 2_500);

    llm.script("router", "new_booking", "new_booking");
    llm.script(
      "branch",
      'Как к вам обращаться?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {}}',
      'Что беспокоит?\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {"name": "Алексей"}}',
    );
    await postSse(`${server.url}/v1/clinic/threads/${threadId}/messages`, { text: "Хочу записаться" }, A);
    await new Promise((r) => setTimeout(r, 400));
    await postSse(`${server.url}/v1/clinic/threads/${threadId}/messages`, { text: "Алексей" }, A);

    const events = await seenA;
    const actor = events.find((e) => e.type === "@xstate.actor" && e.sessionId === threadId)!;
    // The actor starts where its log starts (xstate.init); between turns it then says where the
    // patient is: the booking branch at its step.
    expect(actor.snapshot!.value).toEqual({ patient: "unrouted", turn: "idle", handler: "bot" });
    const positions = events
      .filter((e) => e.type === "@xstate.snapshot" && e.sessionId === threadId)
      .map((e) => e.snapshot!.value);
    expect(positions).toContainEqual({ patient: { new_booking: "intro" }, turn: "idle", handler: "bot" });
    expect(JSON.parse(actor.definition!)).toMatchObject({
      id: "clinicDialogue",
      type: "parallel",
      states: { patient: { initial: "unrouted" }, turn: { initial: "idle" } },
    });
    const stepActor = events.find((e) => e.type === "@xstate.actor" && e.sessionId === steps)!;
    expect(stepActor.snapshot!.value).toBe("intro");
    expect(JSON.parse(stepActor.definition!).states).toHaveProperty("offer_time");
    const moved = events.find((e) => e.type === "@xstate.snapshot" && e.sessionId === steps)!;
    expect(moved.snapshot!.value).toBe("qualify");
    // One inspection event per real machine event: the dialogue's logged events, in order, all but the init.
    const log = (await listMachineEvents(server.db.sql, threadId, threadId)).map((l) => ({
      event: l.event as { type: string },
    }));
    expect(log[0]!.event.type).toBe("xstate.init");
    const inspected = events
      .filter((e) => e.type === "@xstate.event" && e.sessionId === threadId)
      .map((e) => e.event!.type);
    expect(inspected).toEqual(log.slice(1).map((r) => r.event.type));
    expect(inspected.length).toBeGreaterThanOrEqual(4); // two turns, each a message and the model results
    expect(events.filter((e) => e.type === "@xstate.snapshot" && e.sessionId === threadId)).toHaveLength(
      inspected.length,
    );
    expect(inspected).toContain(moved.event!.type);
    expect(inspected.some((type) => /turn \(row_version/.test(type))).toBe(false);
    expect(await seenB).toEqual([]);
  });
});
