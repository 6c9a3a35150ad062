import { createServer, type Server } from "node:http";
import { describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { testWebhookSecret, verifyDelivery, type Delivery } from "../utils/webhook-receiver";
import { freePort, modelEnv, startServerProcess, useProcesses } from "./processes";
import { openSse } from "./sse-live";

/**
 * A webhook receiver down for 10 minutes (issue 47 item 2) loses nothing: every event arrives
 * once per id, each conversation's in `seq` order, none a dead letter — through a restart of the
 * server in the middle of the outage too.
 *
 * Time scale: every duration is divided by SCALE (100), so the 10-minute outage takes 6 s. The
 * server gets the default retry settings divided the same way (WEBHOOK_BACKOFF_MS 1 s → 10 ms,
 * WEBHOOK_BACKOFF_MAX_MS 10 min → 6 s, WEBHOOK_RETRY_HORIZON_MS 24 h → 864 s): the same number
 * of attempts (about ten per head) and the same cap relative to the outage as a real 10-minute
 * outage. `bench/webhook-outage.ts` runs the unscaled 10 minutes with the defaults.
 *
 * The receiver is really down: its port is closed (every attempt is a refused connection), then
 * a receiver is started on the same port. Both databases.
 */
const SCALE = 100;
const OUTAGE_MS = 600_000 / SCALE;
const CONVERSATIONS = 4;
const SECRET = testWebhookSecret("outage-hooks");
const backend = onServer ? "PostgreSQL server" : "file-backed PGlite";

let receiver: Server | null = null;
const fx = useProcesses(() => new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r())));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`a webhook receiver down for 10 minutes, time scale 1/${SCALE} (${backend})`, () => {
  it("gets every event once per id, in seq order per conversation, none a dead letter", async () => {
    const hookPort = await freePort();
    const env = modelEnv(fx.llm, {
      WEBHOOK_URL: `http://127.0.0.1:${hookPort}/hook`,
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_BACKOFF_MS: String(1_000 / SCALE),
      WEBHOOK_BACKOFF_MAX_MS: String(600_000 / SCALE),
      WEBHOOK_RETRY_HORIZON_MS: String(86_400_000 / SCALE),
    });
    let server = await startServerProcess(fx.storage, env);
    fx.servers.push(server);
    const post = async (path: string, body: unknown = {}) => {
      const r = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(r.status, `${path}: ${await r.clone().text()}`).toBeLessThan(300);
      return r;
    };

    // The outage starts: nothing listens on the receiver's port. Each conversation escalates
    // (a model turn) and is taken; the rest of its events come in the outage's middle, after a
    // restart, queued behind a head that keeps failing.
    const t0 = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < CONVERSATIONS; i++) {
      const id = ((await (await post("/v1/clinic/threads")).json()) as { threadId: string }).threadId;
      fx.llm.script("router", "escalate_human");
      fx.llm.script("branch", "Передаю ваш вопрос администратору.");
      const turn = await openSse(`${server.url}/v1/clinic/threads/${id}/messages`, {
        text: `Позовите администратора ${i}`,
      });
      await turn.waitFor((all) => all.some((e) => e.event === "done"));
      await post(`/v1/inbox/conversations/${id}/take`, { operator: `Оператор ${i}` });
      ids.push(id);
    }
    await sleep(OUTAGE_MS / 3);
    await server.stop();
    expect(server.child.exitCode).toBe(0);
    server = await startServerProcess(fx.storage, env);
    fx.servers.push(server);
    for (const [i, id] of ids.entries()) {
      await post(`/v1/inbox/conversations/${id}/messages`, { text: `Здравствуйте, ${i}` });
      await post(`/v1/inbox/conversations/${id}/close`);
    }
    await sleep(Math.max(0, t0 + OUTAGE_MS - Date.now()));
    const refused = server.output().match(/webhook: delivery .* failed/g)?.length ?? 0;
    // The restarted process kept retrying the heads (attempts counted in the outbox, not memory).
    expect(refused).toBeGreaterThanOrEqual(CONVERSATIONS);

    // The receiver is back on the same port.
    const got: Delivery[] = [];
    receiver = createServer(async (req, res) => {
      let body = "";
      for await (const c of req) body += c;
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      got.push({ headers, body, json: JSON.parse(body) as Record<string, unknown>, status: 200 });
      res.writeHead(200).end("ok");
    });
    await new Promise<void>((r) => receiver!.listen(hookPort, "127.0.0.1", () => r()));
    const expected = CONVERSATIONS * 4;
    // Within one capped back-off (plus slack for a loaded machine).
    const until = Date.now() + (2 * 600_000) / SCALE + 10_000;
    while (got.length < expected && Date.now() < until) await sleep(50);
    await sleep(500);

    expect(got).toHaveLength(expected);
    expect(new Set(got.map((d) => d.headers["webhook-id"])).size).toBe(expected);
    for (const d of got) {
      expect(verifyDelivery(SECRET, d)).toEqual(d.json);
      expect(d.json.id).toBe(d.headers["webhook-id"]);
      expect(Number.isInteger(d.json.seq)).toBe(true);
    }
    for (const id of ids) {
      const mine = got.filter((d) => d.json.conversationId === id);
      expect(mine.map((d) => d.json.seq)).toEqual([1, 2, 3, 4]);
      expect(mine.map((d) => d.json.event)).toEqual([
        "conversation.escalated",
        "conversation.taken",
        "operator.message",
        "conversation.closed",
      ]);
    }
    const dead = (await (await fetch(`${server.url}/v1/webhooks/dead-letters`)).json()) as { deadLetters: unknown[] };
    expect(dead.deadLetters).toEqual([]);
  }, 120_000);
});
