import { describe, expect, it } from "vitest";
import { SqlCounter } from "../../bench/sql-count";
import { onServer } from "../utils/db";
import { useTestServer } from "../utils/server";
import { testWebhookSecret, useWebhookReceiver } from "../utils/webhook-receiver";

/**
 * An idle webhook dispatcher sends no statement: it sleeps until the earliest pending delivery
 * comes due (a retry's back-off) instead of polling the outbox at the back-off's pace — with a
 * 50 ms back-off the old timer made ~40 passes in this window. A commit still wakes it at once,
 * and a failed delivery is retried when its back-off ends.
 */
const hook = useWebhookReceiver();
const server = useTestServer({
  env: () => ({
    WEBHOOK_URL: hook.url,
    WEBHOOK_SECRET: testWebhookSecret("idle-hooks"),
    WEBHOOK_BACKOFF_MS: "50",
    RUN_SWEEP_MS: "600000",
  }),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`webhook dispatcher at rest (${onServer ? "PostgreSQL server" : "PGlite"})`, () => {
  it("runs no statement while nothing is pending; a take is delivered at once and retried after its back-off", async () => {
    const r = await fetch(`${server.url}/v1/clinic/threads`, { method: "POST" });
    const { threadId } = (await r.json()) as { threadId: string };
    await sleep(300);

    const counter = new SqlCounter();
    counter.attach(server.db.sql);
    await sleep(2_000);
    counter.detach(server.db.sql);
    expect(counter.snapshot().statements).toBe(0);

    hook.failNext(503);
    const taken = await fetch(`${server.url}/v1/inbox/conversations/${threadId}/take`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(taken.status).toBe(200);
    const until = Date.now() + 10_000;
    while (Date.now() < until && !hook.deliveries.some((d) => d.status === 200)) await sleep(20);
    const tries = hook.deliveries.filter((d) => d.json.event === "conversation.taken");
    expect(tries.map((d) => d.status)).toEqual([503, 200]);
    expect(tries[0]!.headers["webhook-id"]).toBe(tries[1]!.headers["webhook-id"]);
  }, 60_000);
});
