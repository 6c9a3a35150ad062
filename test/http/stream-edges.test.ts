import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { clinicApi } from "../utils/clinic-api";

/**
 * A Last-Event-ID past the end of a stream's log (issue 43 item 2) is a structured 400 on every
 * stream route that takes one, not a 200 stream that never delivers anything.
 */

let c: ReturnType<typeof clinicApi>;

const server = useTestServer({ llm: true, tokens: "a:tok-a:*", env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;
beforeAll(async () => {
  c = clinicApi(server.url, "tok-a");
});

const get = (path: string, lastEventId: number | string) =>
  c.api(path, { headers: { "last-event-id": String(lastEventId), accept: "text/event-stream" } });
const errorOf = async (r: Response) =>
  ((await r.json()) as { error: { code: string; details?: { reason?: string; lastEventId?: number } } }).error;

describe("Last-Event-ID past the end", () => {
  it("a thread's event stream: 400 past its last event; at the last event the stream opens", async () => {
    const id = await c.escalated(llm);
    await c.take(id, "Мария");
    await c.write(id, "Здравствуйте");
    // Two events in the log: taken (1), operator.message (2).
    for (const past of [3, 99, "999999999"]) {
      const r = await get(`/v1/clinic/threads/${id}/events`, past);
      expect(r.status).toBe(400);
      const e = await errorOf(r);
      expect(e.code).toBe("invalid_request");
      expect(e.details).toMatchObject({ reason: "last_event_id_past_end", lastEventId: 2 });
    }
    const fresh = await c.newThread();
    expect((await get(`/v1/clinic/threads/${fresh}/events`, 1)).status).toBe(400);
    const ok = await get(`/v1/clinic/threads/${id}/events`, 2);
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
  });

  it("a run's event stream: 400 past its `done`; at `done`, 204 as before", async () => {
    const id = await c.newThread();
    llm.script("router", "general_info");
    llm.script("branch", "Клиника работает с 8 до 20.");
    const turn = await c.say(id, "Когда вы работаете?");
    const runId = turn.headers.get("x-run-id")!;
    const last = Number(turn.events.at(-1)!.id);
    expect((await get(`/v1/runs/${runId}/events`, last)).status).toBe(204);
    const r = await get(`/v1/runs/${runId}/events`, last + 1);
    expect(r.status).toBe(400);
    expect((await errorOf(r)).details).toMatchObject({ reason: "last_event_id_past_end", lastEventId: last });
  });
});
