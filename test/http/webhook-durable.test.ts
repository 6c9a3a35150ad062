import { describe, expect, it } from "vitest";
import { clinicApi } from "../utils/clinic-api";
import { useTestServer } from "../utils/server";
import { useWebhookReceiver, testWebhookSecret, verifyDelivery, type Delivery } from "../utils/webhook-receiver";

/**
 * Webhooks as durable as the conversation (issue 47 item 2), with the back-off scaled down by
 * configuration: a receiver down for a long outage (hundreds of back-off periods) loses nothing —
 * every event is delivered once per id, each conversation's in seq order, one at a time — and
 * past the retry horizon a delivery becomes a dead letter an admin lists and sends again.
 */
const SECRET = testWebhookSecret("durable-hooks");
const hook = useWebhookReceiver();
const t = useTestServer({ llm: true, serve: false });
const llm = t.llm;

const until = async (check: () => boolean | Promise<boolean>, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
};

async function withServer(env: Record<string, string>, body: (c: ReturnType<typeof clinicApi>) => Promise<void>) {
  const server = await t.start({
    llm: true,
    tokens: "default:tok:*",
    env: { RUN_DETACH_GRACE_MS: "0", WEBHOOK_URL: hook.url, WEBHOOK_SECRET: SECRET, ...env },
  });
  try {
    await body(clinicApi(server.url, "tok"));
  } finally {
    await server.stop();
  }
}

/**
 * A server with the back-off scaled down (`backoffMs` up to `maxMs`, dead letters after
 * `horizonMs`) whose receiver starts down with no deliveries recorded.
 */
function withReceiverDown(
  [backoffMs, maxMs, horizonMs]: [string, string, string],
  body: (c: ReturnType<typeof clinicApi>) => Promise<void>,
) {
  const env = { WEBHOOK_BACKOFF_MS: backoffMs, WEBHOOK_BACKOFF_MAX_MS: maxMs, WEBHOOK_RETRY_HORIZON_MS: horizonMs };
  return withServer(env, async (c) => {
    hook.deliveries.length = 0;
    hook.setDown(true);
    await body(c);
  });
}

/** An escalated thread, then an operator's take, two messages and the close: five events. */
async function conversation(c: ReturnType<typeof clinicApi>, i: number): Promise<string> {
  const id = await c.escalated(llm, `Позовите администратора ${i}`, "Передаю ваш вопрос администратору.");
  expect((await c.take(id, `Оператор ${i}`)).status).toBe(200);
  expect((await c.write(id, `Здравствуйте, ${i}`)).status).toBeLessThan(300);
  expect((await c.write(id, `Чем помочь, ${i}?`)).status).toBeLessThan(300);
  expect((await c.close(id)).status).toBe(200);
  return id;
}

const byConversation = (ds: Delivery[], id: string) => ds.filter((d) => d.json.conversationId === id);

describe("a receiver down for a long outage", () => {
  it("gets every event once per id, each conversation's in order, one at a time", async () => {
    await withReceiverDown(["5", "40", "600000"], async (c) => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await conversation(c, i));
      // The outage lasts many times the back-off cap: every head is retried again and again.
      await until(() => hook.deliveries.filter((d) => d.status === 503).length >= 60);
      await new Promise((r) => setTimeout(r, 1_500));
      hook.setDown(false);
      const total = (
        await t.db.sql<
          { n: number }[]
        >`select count(*)::int as n from outbox where conversation_id = any(${ids}::uuid[])`
      )[0]!.n;
      expect(total).toBe(ids.length * 5);
      await until(() => hook.deliveries.filter((d) => d.status === 200).length >= total);
      await new Promise((r) => setTimeout(r, 200));

      const ok = hook.deliveries.filter((d) => d.status === 200);
      // Once per id: no id delivered twice, none missing.
      expect(new Set(ok.map((d) => d.headers["webhook-id"])).size).toBe(total);
      expect(ok).toHaveLength(total);
      for (const id of ids) {
        const mine = byConversation(hook.deliveries, id);
        // In order: every attempt (failed ones too) of the conversation in seq order — seq k+1 is
        // never tried before seq k was delivered: one in flight per conversation.
        const attempted = mine.map((d) => d.json.seq as number);
        expect(attempted).toEqual([...attempted].sort((a, b) => a - b));
        expect(byConversation(ok, id).map((d) => d.json.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(byConversation(ok, id).map((d) => d.json.event)).toEqual([
          "conversation.escalated",
          "conversation.taken",
          "operator.message",
          "operator.message",
          "conversation.closed",
        ]);
        for (const d of byConversation(ok, id)) expect(verifyDelivery(SECRET, d)).toEqual(d.json);
      }
      expect((await t.db.sql`select 1 from webhook_dead_letters`).length).toBe(0);
    });
  }, 120_000);

  it("past the retry horizon is a dead letter: listed, sent again, delivered once with its id and seq", async () => {
    await withReceiverDown(["5", "20", "300"], async (c) => {
      const id = await c.newThread();
      llm.script("router", "escalate_human");
      llm.script("branch", "Передаю ваш вопрос администратору.");
      await c.say(id, "Позовите администратора");
      type Dead = {
        id: string;
        outboxId: string;
        conversationId: string;
        seq: number;
        event: string;
        lastError: string;
      };
      let dead: Dead[] = [];
      await until(async () => {
        dead = (await c.json<{ deadLetters: Dead[] }>(c.api("/v1/webhooks/dead-letters"))).deadLetters;
        return dead.some((d) => d.conversationId === id);
      });
      const letter = dead.find((d) => d.conversationId === id)!;
      expect(letter).toMatchObject({ seq: 1, event: "conversation.escalated", lastError: "HTTP 503" });

      hook.setDown(false);
      const again = await c.post(`/v1/webhooks/dead-letters/${letter.id}/redeliver`);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ outboxId: letter.outboxId, status: "pending" });
      await until(() => byConversation(hook.deliveries, id).some((d) => d.status === 200));
      const ok = byConversation(hook.deliveries, id).filter((d) => d.status === 200);
      expect(ok).toHaveLength(1);
      expect(ok[0]!.headers["webhook-id"]).toBe(letter.outboxId);
      expect(ok[0]!.json.seq).toBe(1);
      const after = (await c.json<{ deadLetters: Dead[] }>(c.api("/v1/webhooks/dead-letters"))).deadLetters;
      expect(after.some((d) => d.id === letter.id)).toBe(false);
      // Not twice, not another tenant's, not a made-up id.
      expect((await c.post(`/v1/webhooks/dead-letters/${letter.id}/redeliver`)).status).toBe(404);
      expect((await c.post(`/v1/webhooks/dead-letters/not-a-number/redeliver`)).status).toBe(404);
    });
  }, 60_000);
});
