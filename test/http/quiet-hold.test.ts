import { describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { clinicApi } from "../utils/clinic-api";

/**
 * A quiet bot while a human holds, and the front desk's hours (issue 43 item 5), over HTTP:
 * the holding reply once, an acknowledgement while nobody has answered, nothing while an operator
 * talks; an escalation out of hours promises the opening, not an answer within the hour.
 */

const TOKENS = "admin@a:tok-admin:*,operator@a:tok-maria:Мария,chat@a:tok-chat";

const server = useTestServer({ llm: true, tokens: TOKENS, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

const patient = () => clinicApi(server.url, "tok-chat");
const maria = () => clinicApi(server.url, "tok-maria");
const admin = () => clinicApi(server.url, "tok-admin");
type Message = { role: string; text: string };
const transcript = async (id: string) =>
  (await maria().json<{ messages: Message[] }>(maria().api(`/v1/inbox/conversations/${id}`))).messages;
const allDay = { open: "00:00", close: "24:00" };
const week = (day: { open: string; close: string } | null) =>
  Object.fromEntries(["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((d) => [d, day]));
const putDesk = (token: string, body: unknown) =>
  clinicApi(server.url, token).api("/v1/clinic/desk", { method: "POST", body: JSON.stringify(body) });

const HOLDING = "Передаю администратору, с вами свяжутся в течение ближайшего часа.";
const escalated = () => patient().escalated(llm, "Позовите администратора", HOLDING);

describe("a quiet bot while a human holds", () => {
  it("the holding reply once, then an acknowledgement; once the operator writes, the bot says nothing", async () => {
    const id = await escalated();
    await maria().take(id);
    const calls = llm.count();
    const first = patient().final(await patient().say(id, "Алло?"));
    expect(first.reply).toContain("Мария");
    const second = patient().final(await patient().say(id, "Вы тут?"));
    expect(second.reply).toBe("Сообщение передано администратору — ответ придёт сюда.");
    expect((await maria().write(id, "Да, я здесь. Чем помочь?")).status).toBe(201);
    const third = await patient().say(id, "Хочу перенести запись");
    expect(patient().final(third)).toMatchObject({ reply: "", events: ["held_by_operator"] });
    expect(third.events.filter((e) => e.event === "token")).toHaveLength(0);
    expect(llm.count()).toBe(calls);
    const tail = (await transcript(id)).slice(-3);
    // The patient's words are stored; the bot's silence is not a message.
    expect(tail.map((m) => m.role)).toEqual(["assistant", "operator", "user"]);
    expect(tail[2]!.text).toBe("Хочу перенести запись");
  });
});

describe("the front desk's hours", () => {
  it("only an admin sets them; nonsense is a 400", async () => {
    const desk = { timezone: "Europe/Moscow", hours: week(allDay), answerWithinMinutes: 60, holdingRepeatMinutes: 30 };
    expect((await putDesk("tok-maria", desk)).status).toBe(403);
    expect((await putDesk("tok-admin", { ...desk, timezone: "Mars/Olympus" })).status).toBe(400);
    expect((await putDesk("tok-admin", desk)).status).toBe(200);
    expect(await maria().json(maria().api("/v1/clinic/desk"))).toEqual(desk);
  });

  it("out of hours an escalation promises the working hours, not an answer within the hour", async () => {
    const closed = { timezone: "Europe/Moscow", hours: week(null), answerWithinMinutes: 60, holdingRepeatMinutes: 30 };
    expect((await putDesk("tok-admin", closed)).status).toBe(200);
    try {
      const id = await patient().newThread();
      llm.script("router", "escalate_human");
      llm.script("branch", HOLDING);
      const r = patient().final(await patient().say(id, "Позовите администратора"));
      expect(r.events).toContain("escalated");
      expect(r.reply).toContain("в рабочее время клиники");
      expect(r.reply).not.toContain("ближайшего часа");
      expect((await transcript(id)).at(-1)!.text).toBe(r.reply);
    } finally {
      await putDesk("tok-admin", { ...closed, hours: week(allDay) });
    }
    // Within hours the promise stands.
    const id = await patient().newThread();
    llm.script("router", "escalate_human");
    llm.script("branch", HOLDING);
    expect(patient().final(await patient().say(id, "Позовите администратора")).reply).toContain("ближайшего часа");
  });
});
