import { describe, expect, it } from "vitest";
import { EMERGENCY_REPLY } from "../../../systems/clinic/templates";
import { useTestServer } from "../../utils/server";
import { clinicApi, stepTail } from "../../utils/clinic-api";

/** Issue 14 items 6–7 and the message length limit, against the real server with a scripted model. */

const server = useTestServer({ llm: true, tokens: "a:tok-a", env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;
const A = { authorization: "Bearer tok-a", "content-type": "application/json" };

type State = {
  activeBranch: string | null;
  escalationReason: string | null;
  handoffCount: number;
  step: string | null;
  suspended: { intent: string } | null;
};
const c = clinicApi(server, "tok-a");
const release = (id: string) => c.post(`/v1/clinic/threads/${id}/release`);

/** Runs one turn with the given scripted models and returns its final plus the model calls it made. */
async function turn(id: string, text: string, router?: string, ...branch: string[]) {
  llm.reset();
  if (router !== undefined) llm.script("router", router);
  if (branch.length) llm.script("branch", ...branch);
  const r = await c.say(id, text);
  expect(r.status).toBe(200);
  const f = c.final(r);
  expect(f, JSON.stringify(r.events)).toBeDefined();
  return { ...f, calls: { router: llm.count("router"), branch: llm.count("branch") } };
}

/** A turn on an escalated thread: whatever the router and branch say, it stays with the human for `reason`. */
async function heldFor(reason: string, id: string, text: string, router: string, ...branch: string[]) {
  const r = await turn(id, text, router, ...branch);
  expect(r.state).toMatchObject({ activeBranch: "escalate_human", escalationReason: reason });
  return r;
}

/** A new thread whose patient has started a booking with the ENT: at its first step. */
async function bookingStarted(): Promise<string> {
  const id = await c.newThread();
  await turn(
    id,
    "Хочу записаться к ЛОРу",
    "new_booking",
    `Как к вам обращаться?${stepTail("intro", { specialist: "ЛОР" })}`,
  );
  return id;
}

/** Three counted switches: the next one would trip the loop guard. */
async function threeSwitches(id: string) {
  await turn(id, "Какой у вас адрес?", "general_info", "Мы на Лесной, 5.");
  await turn(id, "А сколько стоит УЗИ?", "price_question", "УЗИ — 2000 рублей.");
  await turn(id, "А парковка есть?", "general_info", "Да, бесплатная.");
  const r = await turn(id, "А приём терапевта сколько?", "price_question", "2500 рублей.");
  expect(r.state).toMatchObject({ activeBranch: "price_question", handoffCount: 3 });
}

describe("acute red flags come before the loop guard (issue 14 item 6)", () => {
  it("after three switches «сильное кровотечение, не могу дышать» gets the emergency reply and acute_pain, with no model call", async () => {
    const id = await c.newThread();
    await threeSwitches(id);
    const r = await turn(id, "сильное кровотечение, не могу дышать", "escalate_human", "Передаю оператору.");
    expect(r.reply).toBe(EMERGENCY_REPLY);
    expect(r.reply).toMatch(/103/);
    expect(r.reply).toMatch(/112/);
    expect(r.state).toMatchObject({ activeBranch: "escalate_human", escalationReason: "acute_pain" });
    expect(r.events).toEqual(expect.arrayContaining(["red_flag", "escalated"]));
    expect(r.events).not.toContain("loop_guard");
    expect(r.calls).toEqual({ router: 0, branch: 0 });
    // Stored as the turn's reply, with the reason in the message meta.
    const th = (await (await fetch(`${server.url}/v1/clinic/threads/${id}`, { headers: A })).json()) as {
      messages: { text: string; meta: { escalationReason?: string } }[];
    };
    expect(th.messages.at(-1)).toMatchObject({ text: EMERGENCY_REPLY, meta: { escalationReason: "acute_pain" } });
  });

  it.each([
    "Помогите, кровь не останавливается уже час",
    "Задыхаюсь, что делать?",
    "Мужу плохо — потерял сознание!",
    "Сильно давит в груди и отдаёт в левую руку",
    "У ребёнка опухло горло после укуса осы",
    "СИЛЬНОЕ КРОВОТЕЧЕНИЕ!!!",
  ])("a fresh thread: %s → emergency, no model call", async (text) => {
    const id = await c.newThread();
    const r = await turn(id, text, "new_booking", "Как вас зовут?");
    expect(r.reply).toBe(EMERGENCY_REPLY);
    expect(r.state.escalationReason).toBe("acute_pain");
    expect(r.calls).toEqual({ router: 0, branch: 0 });
  });

  it("a booking in progress is suspended by the emergency, and the loop-locked thread still gets it", async () => {
    const id = await bookingStarted();
    const r = await turn(id, "Ой, у меня сильное кровотечение из носа");
    expect(r.state).toMatchObject({
      activeBranch: "escalate_human",
      escalationReason: "acute_pain",
      suspended: { intent: "new_booking" },
    });
    const loop = await c.newThread();
    await threeSwitches(loop);
    const locked = await turn(loop, "А во сколько вы открываетесь?", "general_info", "С восьми.");
    expect(locked.state.escalationReason).toBe("routing_loop");
    const urgent = await turn(loop, "Мама без сознания, что делать?", "escalate_human");
    expect(urgent.reply).toBe(EMERGENCY_REPLY);
    expect(urgent.state.escalationReason).toBe("acute_pain");
  });

  it("no red flag, no emergency: a stuffy nose, a denial, an ordinary question go to the router", async () => {
    for (const text of [
      "Не могу дышать носом уже неделю, хочу к ЛОРу",
      "Кровотечения нет, просто болит зуб",
      "Я не задыхаюсь, просто кашель",
      "Сколько стоит приём?",
    ]) {
      const id = await c.newThread();
      const r = await turn(id, text, "general_info", "Ответ.");
      expect(r.reply, text).toBe("Ответ.");
      expect(r.state.escalationReason).toBeNull();
      expect(r.calls).toEqual({ router: 1, branch: 1 });
    }
  });
});

describe("an escalated thread stays with the human until an operator releases it (issue 14 item 7)", () => {
  it("after acute_pain «А сколько стоит приём?» gets a holding reply from the escalation branch, the reason stays", async () => {
    const id = await c.newThread();
    await turn(id, "сильное кровотечение, не могу дышать");
    const r = await turn(
      id,
      "А сколько стоит приём?",
      "price_question",
      "Ваш вопрос уже у администратора, он скоро свяжется с вами.",
    );
    expect(r.reply).toBe("Ваш вопрос уже у администратора, он скоро свяжется с вами.");
    expect(r.state).toMatchObject({ activeBranch: "escalate_human", escalationReason: "acute_pain" });
    expect(r.events).not.toContain("handoff");
    // The branch called was the escalation branch.
    expect(llm.calls.find((c) => c.role === "branch")!.messages[0]!.content).not.toMatch(/стоимост/i);
    // A signal from the escalation branch does not get out either.
    const again = await heldFor(
      "acute_pain",
      id,
      "Запишите меня к терапевту",
      "new_booking",
      "Администратор на связи. [INTENT_CHANGE: new_booking]",
    );
    expect(again.reply).toBe("Администратор на связи.");
  });

  it("any reason stays: a surgery hand-off by signal, an explicit request by the router", async () => {
    const id = await c.newThread();
    await turn(
      id,
      "Хочу записаться к хирургу",
      "new_booking",
      `Как вас зовут?${stepTail("qualify", { specialist: "хирург" })}`,
    );
    await heldFor(
      "surgery",
      id,
      "Мне нужна операция под наркозом",
      "new_booking",
      "[INTENT_CHANGE: escalate_human:surgery]",
      "Передаю ваш вопрос администратору.",
    );
    await heldFor(
      "surgery",
      id,
      "А сколько стоит приём?",
      "price_question",
      "Администратор ответит вам в ближайшее время.",
    );
    // Even the suspended booking does not resume on its own.
    await heldFor("surgery", id, "Давайте всё-таки запишемся", "new_booking", "Администратор уже подключается.");

    const other = await c.newThread();
    await turn(other, "Дайте живого человека", "escalate_human", "Соединяю с администратором.");
    await heldFor("explicit_request", other, "Какой у вас адрес?", "general_info", "Администратор скоро ответит.");
  });

  it("a safety escalation still fires inside an escalated thread", async () => {
    const id = await c.newThread();
    await turn(id, "Позовите оператора", "escalate_human", "Соединяю.");
    const r = await turn(id, "Пока жду — задыхаюсь, не могу вдохнуть", "general_info", "x");
    expect(r.reply).toBe(EMERGENCY_REPLY);
    expect(r.state.escalationReason).toBe("acute_pain");
    expect(r.calls.branch).toBe(0);
  });

  it("the operator's release returns the thread to the bot at the booking's step; a second release is a conflict; replay still rebuilds", async () => {
    const id = await bookingStarted();
    await turn(id, "сильное кровотечение");
    const rel = await release(id);
    expect(rel.status).toBe(200);
    const body = (await rel.json()) as { released: boolean; state: State };
    expect(body.released).toBe(true);
    // The booking the escalation suspended goes on at its step, with its slots (issue 32).
    expect(body.state).toMatchObject({
      activeBranch: "new_booking",
      step: "intro",
      slots: { specialist: "ЛОР" },
      escalationReason: null,
      handoffCount: 0,
      suspended: null,
    });
    const th = (await (await fetch(`${server.url}/v1/clinic/threads/${id}`, { headers: A })).json()) as {
      state: State;
    };
    expect(th.state).toEqual(body.state);
    // The bot answers again, in the booking: a side question keeps the booking (sticky).
    const price = await turn(
      id,
      "А сколько стоит приём?",
      "price_question",
      `Приём стоит 2500 рублей.${stepTail("intro")}`,
    );
    expect(price.state).toMatchObject({ activeBranch: "new_booking", step: "intro", escalationReason: null });
    expect(price.reply).toBe("Приём стоит 2500 рублей.");
    const again = await release(id);
    expect(again.status).toBe(409);
    const err = (await again.json()) as { error: { code: string; message: string } };
    expect(err.error.code).toBe("conflict");
    expect(err.error.message).toMatch(/[а-я]/i);
    expect(
      (
        await fetch(`${server.url}/v1/clinic/threads/00000000-0000-0000-0000-000000000000/release`, {
          method: "POST",
          headers: A,
        })
      ).status,
    ).toBe(404);
    const replay = (await (await fetch(`${server.url}/v1/conversations/${id}/replay`, { headers: A })).json()) as {
      machines: { replayed: boolean; matches: boolean }[];
    };
    expect(replay.machines.length).toBeGreaterThan(0);
    for (const m of replay.machines) expect(m).toMatchObject({ replayed: true, matches: true });
  });

  it("a released booking goes on at its step with no resume needed", async () => {
    const id = await bookingStarted();
    await heldFor(
      "explicit_request",
      id,
      "Позовите администратора",
      "escalate_human",
      "[INTENT_CHANGE: escalate_human|explicit_request]",
      "Соединяю.",
    );
    expect((await release(id)).status).toBe(200);
    const r = await turn(id, "Давайте продолжим запись", "new_booking", `Как к вам обращаться?${stepTail("intro")}`);
    expect(r.state).toMatchObject({ activeBranch: "new_booking", step: "intro", suspended: null });
    expect(r.events).not.toContain("handoff");
  });
});

describe("message length", () => {
  it("over 4000 characters is refused with a Russian structured error; 4000 is accepted", async () => {
    const id = await c.newThread();
    for (const text of ["а".repeat(4001), "Здравствуйте! ".repeat(400)]) {
      const r = await fetch(`${server.url}/v1/clinic/threads/${id}/messages`, {
        method: "POST",
        headers: A,
        body: JSON.stringify({ text }),
      });
      expect(r.status).toBe(400);
      const body = (await r.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("invalid_request");
      expect(body.error.message).toMatch(/слишком длинное/);
      expect(body.error.message).toMatch(/4000/);
    }
    const ok = await turn(id, "б".repeat(4000), "general_info", "Ответ.");
    expect(ok.reply).toBe("Ответ.");
  });
});
