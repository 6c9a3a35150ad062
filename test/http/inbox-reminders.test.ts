import { describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { followSse } from "../utils/sse";
import { useWebhookReceiver } from "../utils/webhook-receiver";
import { clinicApi } from "../utils/clinic-api";

/**
 * Reminders of the operator's desk (issue 43 item 4): an escalation not taken within N minutes
 * and a held thread silent for M minutes raise a reminder (the inbox's list and stream, a signed
 * webhook) and, with REMIND_REQUEUE, a silent thread returns to the queue. Deadlines are data:
 * a server started after the escalation still reminds. Time is driven by short settings (a
 * fraction of a minute), never measured.
 */

const OFF = { REMIND_UNTAKEN_AFTER_MIN: "0", REMIND_SILENT_AFTER_MIN: "0" };
/** 0.004 min = 240 ms: due within a few sweeps. */
const SHORT = { REMIND_UNTAKEN_AFTER_MIN: "0.004", REMIND_SILENT_AFTER_MIN: "0.004", REMIND_SWEEP_MS: "60" };

const hook = useWebhookReceiver();
const t = useTestServer({ llm: true, serve: false });
const llm = t.llm;

const start = (env: Record<string, string>) =>
  t.start({
    llm: true,
    tokens: "a:tok-a:*",
    env: { RUN_DETACH_GRACE_MS: "0", WEBHOOK_URL: hook.url, WEBHOOK_SECRET: "s", WEBHOOK_BACKOFF_MS: "40", ...env },
  });

const escalate = (c: ReturnType<typeof clinicApi>) => c.escalated(llm, "Позовите живого человека");

type Rem = { conversationId: string; kind: string; since: string; requeued: boolean; operator: string | null };
const remindersOf = async (c: ReturnType<typeof clinicApi>, id: string) =>
  (await c.json<{ items: Rem[] }>(c.api("/v1/inbox/reminders"))).items.filter((r) => r.conversationId === id);
const hooksOf = (id: string, kind: string) =>
  hook.deliveries.filter(
    (d) =>
      d.status === 200 &&
      d.json.event === "conversation.reminder" &&
      d.json.conversationId === id &&
      d.json.kind === kind,
  );

describe("reminders", () => {
  it("an escalation made before the server started is still reminded; taking it ends the reminder; a silent held thread reminds once per silence", async () => {
    // Reminders off: the escalation waits, nobody is reminded.
    const before = await start(OFF);
    const id = await escalate(clinicApi(before.url, "tok-a"));
    await before.stop();

    // A new server (a restart) reads the deadline from the data.
    const s = await start(SHORT);
    const c = clinicApi(s.url, "tok-a");
    const desk = await followSse(`${s.url}/v1/inbox/presence`, { authorization: "Bearer tok-a" });
    await expect
      .poll(() => remindersOf(c, id), { timeout: 10_000 })
      .toEqual([expect.objectContaining({ kind: "untaken", operator: null, requeued: false })]);
    await desk.next((e) => e.event === "reminder" && (e.data as { conversationId: string }).conversationId === id);
    await expect.poll(() => hooksOf(id, "untaken").length, { timeout: 10_000 }).toBe(1);
    expect(hooksOf(id, "untaken")[0]!.json).toMatchObject({
      reason: "explicit_request",
      tenantId: "a",
      system: "clinic",
    });
    expect(hooksOf(id, "untaken")[0]!.json.waitedMs as number).toBeGreaterThanOrEqual(240);

    // Taken: the escalation no longer waits, so its reminder is over; the holder goes silent.
    expect((await c.take(id, "Мария")).status).toBe(200);
    await expect
      .poll(() => remindersOf(c, id), { timeout: 10_000 })
      .toEqual([expect.objectContaining({ kind: "silent", operator: "Мария", requeued: false })]);
    const firstSilence = (await remindersOf(c, id))[0]!.since;
    // Still held (no requeue configured), and reminded once for that silence however many sweeps pass.
    expect((await c.json<{ status: string }>(c.api(`/v1/inbox/conversations/${id}`))).status).toBe("taken");
    await expect.poll(() => hooksOf(id, "silent").length, { timeout: 10_000 }).toBe(1);

    // A message ends the silence; the next silence is a new reminder.
    expect((await c.write(id, "Здравствуйте, слушаю вас.")).status).toBe(201);
    await expect
      .poll(async () => (await remindersOf(c, id)).map((r) => r.since !== firstSilence), { timeout: 10_000 })
      .toEqual([true]);
    await expect.poll(() => hooksOf(id, "silent").length, { timeout: 10_000 }).toBe(2);
    const [rows] = await t.db.sql<{ untaken: number }[]>`
      select count(*) filter (where kind = 'untaken')::int as untaken from inbox_reminders where conversation_id = ${id}`;
    expect(rows!.untaken).toBe(1);
    desk.close();
    await s.stop();
  });

  it("with REMIND_REQUEUE a silent held thread returns to the queue: released by the machine, waiting for any operator", async () => {
    const s = await start({ ...SHORT, REMIND_UNTAKEN_AFTER_MIN: "0", REMIND_REQUEUE: "true" });
    const c = clinicApi(s.url, "tok-a");
    const id = await escalate(c);
    const stream = await c.follow(id);
    const desk = await followSse(`${s.url}/v1/inbox/presence`, { authorization: "Bearer tok-a" });
    await desk.next((e) => e.event === "presence.snapshot");
    expect((await c.take(id, "Олег")).status).toBe(200);
    await stream.next((e) => e.event === "conversation.released", 10_000);
    // Every desk hears the thread is back in the queue (the inbox lists it again without its poll).
    await desk.next(
      (e) =>
        e.event === "handling" &&
        (e.data as { kind: string; conversationId: string }).kind === "escalate" &&
        (e.data as { conversationId: string }).conversationId === id,
      10_000,
    );
    // Then back in the queue (the release's transaction, then the escalation again): waited for.
    await expect
      .poll(() => c.json(c.api(`/v1/inbox/conversations/${id}`)), { timeout: 10_000 })
      .toMatchObject({ status: "open", escalated: true, escalationReason: "explicit_request", takenBy: null });
    await expect
      .poll(() => remindersOf(c, id), { timeout: 10_000 })
      .toEqual([expect.objectContaining({ kind: "silent", operator: "Олег", requeued: true })]);
    // The machine let go too: another operator can take it now.
    expect((await c.take(id, "Ирина")).status).toBe(200);
    expect(await remindersOf(c, id)).toEqual([]);
    desk.close();
    stream.close();
    await s.stop();
  });

  it("two processes sweeping the same database raise a reminder once", async () => {
    const one = await start(OFF);
    const id = await escalate(clinicApi(one.url, "tok-a"));
    await one.stop();
    const a = await start({ ...SHORT, REMIND_SWEEP_MS: "50" });
    const b = await start({ ...SHORT, REMIND_SWEEP_MS: "50" });
    const c = clinicApi(a.url, "tok-a");
    await expect.poll(() => remindersOf(c, id), { timeout: 10_000 }).toHaveLength(1);
    await expect.poll(() => hooksOf(id, "untaken").length, { timeout: 10_000 }).toBe(1);
    // Several more sweeps of both: still one row, one delivery.
    await new Promise((r) => setTimeout(r, 400));
    const [row] = await t.db.sql<
      { n: number }[]
    >`select count(*)::int as n from inbox_reminders where conversation_id = ${id}`;
    expect(row!.n).toBe(1);
    expect(hooksOf(id, "untaken")).toHaveLength(1);
    await a.stop();
    await b.stop();
  });
});
