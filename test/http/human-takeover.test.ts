import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { useWebhookReceiver, testWebhookSecret, verifyDelivery } from "../utils/webhook-receiver";
import { clinicApi, stepTail } from "../utils/clinic-api";

/**
 * Human takeover (issue 32) over real HTTP: the operator holds the thread as a state of the
 * dialogue machine, answers the patient, the patient's client sees it live on the thread's event
 * stream, and release hands the booking back to the bot at the step it had.
 */

const SECRET = testWebhookSecret("hook-secret");
let c: ReturnType<typeof clinicApi>;

const hook = useWebhookReceiver();
const server = useTestServer({
  llm: true,
  tokens: "a:tok-a:*",
  env: () => ({ RUN_DETACH_GRACE_MS: "0", WEBHOOK_URL: hook.url, WEBHOOK_SECRET: SECRET, WEBHOOK_BACKOFF_MS: "40" }),
});
const llm = server.llm;
beforeAll(async () => {
  c = clinicApi(server.url, "tok-a");
});

/** A patient in the booking at `qualify` who then asks for a human. */
async function bookingThenEscalation(): Promise<string> {
  const id = await c.newThread();
  llm.script("router", "new_booking");
  llm.script("branch", `Как к вам обращаться?${stepTail("intro", { specialist: "ЛОР" })}`);
  await c.say(id, "Хочу записаться к ЛОРу");
  llm.script("router", "new_booking");
  llm.script("branch", `Анна, что беспокоит?${stepTail("qualify", { patient_name: "Анна" })}`);
  expect(c.final(await c.say(id, "Анна")).state).toMatchObject({ activeBranch: "new_booking", step: "qualify" });
  // The booking holds the dialogue (sticky): its branch hands off with a signal, then the escalation branch answers.
  llm.script("router", "escalate_human");
  llm.script("branch", "[INTENT_CHANGE: escalate_human|explicit_request]", "Передаю администратору.");
  const esc = c.final(await c.say(id, "Позовите живого человека"));
  expect(esc.events).toContain("escalated");
  expect(esc.state).toMatchObject({
    activeBranch: "escalate_human",
    suspended: { intent: "new_booking", step: "qualify" },
  });
  return id;
}

describe("the human is a state of the dialogue machine", () => {
  it("take, operator messages live on the thread stream, release back to the booking step", async () => {
    const id = await bookingThenEscalation();
    const tab1 = await c.follow(id);
    const tab2 = await c.follow(id);

    expect((await c.take(id, "Мария")).status).toBe(200);
    expect((await tab1.next((e) => e.event === "conversation.taken")).data).toMatchObject({
      operator: "Мария",
      reason: "explicit_request",
      escalated: true,
    });
    // Another operator cannot take it; the holder taking again is a repeat.
    const other = await c.take(id, "Олег");
    expect(other.status).toBe(409);
    expect(((await other.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      "taken_by_another",
    );
    expect((await c.take(id, "Мария")).status).toBe(200);

    // The patient writes while held: no model is asked; the holding reply names who answers and where.
    const calls = llm.calls.length;
    const held = c.final(await c.say(id, "Когда мне ответят?"));
    expect(held.events).toEqual(["held_by_operator"]);
    expect(held.reply).toMatch(/Мария.*здесь, в этом чате/);
    expect(llm.calls.length).toBe(calls);
    expect((await tab1.next((e) => e.event === "patient.message")).data).toMatchObject({ text: "Когда мне ответят?" });

    // The operator answers: idempotent by key; both tabs get it live.
    const w = await c.write(id, "Здравствуйте, Анна! Я администратор Мария, помогу с записью.", "op-msg-1");
    expect(w.status).toBe(201);
    const written = (await w.json()) as { seq: number; messageSeq: number; operator: string };
    expect(written.operator).toBe("Мария");
    for (const tab of [tab1, tab2]) {
      const e = await tab.next((x) => x.event === "operator.message");
      expect(e.id).toBe(String(written.seq));
      expect(e.data).toMatchObject({
        text: "Здравствуйте, Анна! Я администратор Мария, помогу с записью.",
        first: true,
      });
    }
    const again = await c.write(id, "Здравствуйте, Анна! Я администратор Мария, помогу с записью.", "op-msg-1");
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ seq: written.seq, replayed: true });
    const reused = await c.write(id, "Другой текст", "op-msg-1");
    expect(reused.status).toBe(409);
    expect((await c.write(id, "Вторая реплика оператора")).status).toBe(201);

    // A reconnect with Last-Event-ID gets only what came after.
    const resumed = await c.follow(id, written.seq);
    const next = await resumed.next((e) => e.event === "operator.message");
    expect(next.data).toMatchObject({ text: "Вторая реплика оператора", first: false });
    expect(resumed.events.some((e) => Number(e.id) <= written.seq)).toBe(false);
    resumed.close();

    // The transcript keeps the operator's messages with their author.
    const detail = await c.json<{ messages: { role: string; text: string; meta: { author?: string } }[] }>(
      c.api(`/v1/inbox/conversations/${id}`),
    );
    const ops = detail.messages.filter((m) => m.role === "operator");
    expect(ops.map((m) => m.meta.author)).toEqual(["Мария", "Мария"]);

    // Release: back to the bot at the booking's step, with what the operator said in the history.
    expect((await c.release(id)).status).toBe(200);
    expect((await tab2.next((e) => e.event === "conversation.released")).data).toMatchObject({
      branch: "new_booking",
      step: "qualify",
    });
    expect(await c.state(id)).toMatchObject({ activeBranch: "new_booking", step: "qualify", escalationReason: null });
    llm.script("router", "new_booking");
    llm.script("branch", `Что беспокоит?${stepTail("qualify")}`);
    const back = c.final(await c.say(id, "Продолжим"));
    expect(back.state).toMatchObject({ activeBranch: "new_booking", step: "qualify" });
    const branchCall = llm.calls.filter((x) => x.role === "branch").at(-1)!;
    expect(branchCall.messages.map((m) => m.content).join("\n")).toContain(
      "[Администратор клиники]: Здравствуйте, Анна! Я администратор Мария",
    );
    // Nobody holds it now: an operator's message is refused.
    const refused = await c.write(id, "Ещё что-то");
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      "not_held",
    );
    tab1.close();
    tab2.close();

    // Every operator action is in the machine's log: replay rebuilds the snapshot.
    const replay = await c.json<{ machines: { replayed: boolean; matches: boolean }[] }>(
      c.api(`/v1/conversations/${id}/replay`),
    );
    for (const m of replay.machines) expect(m).toMatchObject({ replayed: true, matches: true });
  });

  it("webhook: taken, operator.message, released — signed and deduplicable; stats count them per reason", async () => {
    const id = await bookingThenEscalation();
    await c.take(id, "Ирина");
    await c.write(id, "Слушаю вас");
    await c.close(id);
    const kinds = ["conversation.taken", "operator.message", "conversation.closed"];
    const end = Date.now() + 5_000;
    const mine = () => hook.deliveries.filter((d) => d.json.conversationId === id && d.status === 200);
    while (kinds.some((k) => !mine().some((d) => d.json.event === k))) {
      if (Date.now() > end) throw new Error(`webhook deliveries: ${JSON.stringify(mine().map((d) => d.json))}`);
      await new Promise((r) => setTimeout(r, 30));
    }
    for (const d of mine()) expect(verifyDelivery(SECRET, d)).toEqual(d.json);
    expect(new Set(mine().map((d) => d.headers["webhook-id"])).size).toBe(mine().length);
    // One conversation's events arrive in order, numbered 1, 2, 3 … (the escalation first).
    const seqs = mine().map((d) => d.json.seq as number);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(mine()[0]!.json.event).toBe("conversation.escalated");
    const taken = mine().find((d) => JSON.stringify(d.json).includes("Ирина"))!;
    expect(taken.json).toMatchObject({ reason: "explicit_request" });

    const stats = await c.json<{ handoffs: { reason: string; taken: number; firstReplies: number }[] }>(
      c.api("/v1/stats/outcomes"),
    );
    const row = stats.handoffs.find((h) => h.reason === "explicit_request")!;
    expect(row.taken).toBeGreaterThanOrEqual(2);
    expect(row.firstReplies).toBeGreaterThanOrEqual(2);
    expect(row).toHaveProperty("medianTimeToTakeMs");
  });

  it("a thread the bot answers can be taken too; close from the bot is allowed; bad input is a clear 400", async () => {
    const id = await c.newThread();
    llm.script("router", "general_info");
    llm.script("branch", "Мы работаем с 8 до 20.");
    await c.say(id, "Когда вы работаете?");
    expect((await c.write(id, "Здравствуйте")).status).toBe(409);
    expect((await c.take(id)).status).toBe(200);
    const blank = await c.write(id, "\u200b\u200b");
    expect(blank.status).toBe(400);
    expect((await c.write(id, "x".repeat(4001))).status).toBe(400);
    expect((await c.write(id, "Здравствуйте", "bad key with spaces")).status).toBe(400);
    expect((await c.write(id, "Здравствуйте")).status).toBe(201);
    expect((await c.close(id)).status).toBe(200);
    expect((await c.close(id)).status).toBe(200);
    // Escalated, taken, released, then closed from the bot.
    const esc = await bookingThenEscalation();
    expect((await c.take(esc, "Мария")).status).toBe(200);
    expect((await c.release(esc)).status).toBe(200);
    const closed = await c.close(esc);
    expect(closed.status, await closed.clone().text()).toBe(200);
    expect(await closed.json()).toMatchObject({ status: "closed" });
    expect((await c.write("00000000-0000-4000-8000-000000000000", "x")).status).toBe(404);
    llm.script("router", "general_info");
    llm.script("branch", "Слушаю.");
    expect(c.final(await c.say(id, "Ещё вопрос")).reply).toBe("Слушаю.");
  });

  it.each([
    ["Позовите человека", "explicit_request"],
    ["Соедините меня с живым администратором", "explicit_request"],
    ["У меня резкая боль в животе уже час", "acute_pain"],
    ["Очень сильная боль в спине, не могу терпеть", "acute_pain"],
    ["Это безобразие, я в бешенстве от вашего сервиса", "angry"],
    ["Мне назначили операцию на колене, нужна консультация хирурга", "surgery"],
  ])(
    "a real-model-like router (a bare escalate_human, no reason): «%s» → the webhook and the inbox carry %s",
    async (text, reason) => {
      const id = await c.newThread();
      // What real models answer: the intent alone; the branch speaks plainly and names no reason.
      llm.script("router", "escalate_human");
      llm.script("branch", "Сейчас подключу администратора.");
      const r = c.final(await c.say(id, text));
      expect(r.events).toContain("escalated");
      const item = await c.json<{ escalationReason: string | null }>(c.api(`/v1/inbox/conversations/${id}`));
      expect(item.escalationReason).toBe(reason);
      const end = Date.now() + 5_000;
      const delivered = () =>
        hook.deliveries.find((d) => d.json.conversationId === id && d.json.event === "conversation.escalated");
      while (!delivered()) {
        if (Date.now() > end) throw new Error("no escalation webhook");
        await new Promise((res) => setTimeout(res, 30));
      }
      expect(delivered()!.json.reason).toBe(reason);
    },
  );
});
