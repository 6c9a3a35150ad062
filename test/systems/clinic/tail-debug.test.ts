import { describe, expect, it } from "vitest";
import { stepSpec } from "../../../systems/clinic/registry";
import { defaultRegistry } from "../../../systems/clinic/registry";
import { clinicApi } from "../../utils/clinic-api";
import { useTestServer } from "../../utils/server";
import { eventsNamed, postSse, type SseResponse } from "../../utils/sse";
import { uploadKb } from "../../utils/systems-clinic";

/** Issue 14 items 9–11 over HTTP: signals in odd forms, a tail-only reply, badges for bad tails, stored debug stages. */

const server = useTestServer({ llm: true, tokens: "a:tok-a,b:tok-b", env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;
const A = { authorization: "Bearer tok-a", "content-type": "application/json" };

type Final = { reply: string; state: Record<string, unknown>; events: string[]; notes?: string[] };
type Thread = { messages: { role: string; text: string; meta: Record<string, unknown> }[] };
const tail = (state_after: string, slots: object = {}) =>
  `STATE_JSON: ${JSON.stringify({ state_after, slots_updated: slots })}`;
const question = (step: string) => stepSpec(defaultRegistry(), "new_booking", step)!.question;

const newThread = () => clinicApi(server, "tok-a").newThread();
const final = (r: SseResponse) => eventsNamed(r, "final")[0] as Final;
const tokens = (r: SseResponse) =>
  eventsNamed(r, "token")
    .map((e) => String(e.delta))
    .join("");
async function turn(id: string, text: string, router: string, branch: string[], debug = false) {
  llm.reset();
  llm.script("router", router);
  llm.script("branch", ...branch);
  const r = await postSse(
    `${server.url}/v1/clinic/threads/${id}/messages`,
    { text, ...(debug ? { debug: true } : {}) },
    A,
  );
  expect(r.status).toBe(200);
  return { r, f: final(r) };
}
/** A debugging turn whose branch reply the machine must flag with `event`. */
async function flagged(event: string, id: string, text: string, router: string, reply: string) {
  const r = await turn(id, text, router, [reply], true);
  expect(r.f.events).toContain(event);
  return r;
}
const thread = async (id: string) =>
  (await (await fetch(`${server.url}/v1/clinic/threads/${id}`, { headers: A })).json()) as Thread;

describe("signals in the forms models produce, never streamed (issue 14 item 9)", () => {
  it.each([
    ["[INTENT_CHANGE: escalate_human:angry]", "angry"],
    ["[INTENT_CHANGE: escalate_human|angry]", "angry"],
    ["INTENT_CHANGE: ESCALATE_HUMAN|ANGRY", "angry"],
    ['{"intent_change": "escalate_human", "reason": "angry"}', "angry"],
  ])("%s hands off with its reason and streams nothing of it", async (signal, reason) => {
    const id = await newThread();
    await turn(id, "Какой у вас адрес?", "general_info", ["Мы на Лесной, 5."]);
    const { r, f } = await turn(id, "Сколько можно ждать ответа?!", "general_info", [
      `Понимаю вас.\n${signal}`,
      "Передаю администратору.",
    ]);
    expect(f.state).toMatchObject({ activeBranch: "escalate_human", escalationReason: reason });
    expect(f.events).toEqual(expect.arrayContaining(["handoff", "escalated"]));
    expect(tokens(r)).not.toMatch(/intent_change|escalate_human|angry/i);
    expect(f.reply).not.toMatch(/intent_change|escalate_human/i);
  });

  it("a bare INTENT_CHANGE: price_question line and an upper-case router code", async () => {
    const id = await newThread();
    await turn(id, "Какой у вас адрес?", "GENERAL_INFO", ["Мы на Лесной, 5."]);
    const { r, f } = await turn(id, "А сколько стоит УЗИ?", "general_info", [
      "Сейчас подскажу.\nINTENT_CHANGE: price_question",
      "УЗИ — 2000 рублей.",
    ]);
    expect(f.state).toMatchObject({ activeBranch: "price_question", handoffCount: 1 });
    expect(tokens(r)).not.toMatch(/INTENT_CHANGE|price_question/);
    expect(f.reply).toBe("Сейчас подскажу.\n\nУЗИ — 2000 рублей.");
  });
});

describe("tail-only replies and badges for unusable tails (issue 14 item 10)", () => {
  it("a reply that is only STATE_JSON asks the question of the step being entered", async () => {
    const id = await newThread();
    const first = await turn(id, "Хочу записаться к ЛОРу", "new_booking", [
      `Здравствуйте! Как к вам обращаться?\n${tail("intro", { specialist: "ЛОР" })}`,
    ]);
    expect(first.f.state.step).toBe("intro");
    const { f, r } = await turn(id, "Алексей", "new_booking", [tail("qualify", { name: "Алексей" })]);
    expect(f.state).toMatchObject({ step: "qualify", slots: { name: "Алексей" } });
    expect(f.reply).toBe(question("qualify"));
    expect(f.reply).not.toBe(question("intro"));
    expect(tokens(r)).toBe("");
    // A fenced tail only, moving on again: the next step's question.
    const next = await turn(id, "Болит ухо", "new_booking", [
      "```json\n" + tail("present", { reason: "болит ухо" }) + "\n```",
    ]);
    expect(next.f.reply).toBe(question("present"));
  });

  it("a malformed tail and an ignored signal leave events on the turn, notes for a debugging client and in the stored meta", async () => {
    const id = await newThread();
    await turn(id, "Хочу записаться", "new_booking", [`Как вас зовут?\n${tail("intro")}`]);
    const bad = await flagged(
      "tail_malformed",
      id,
      "Пётр",
      "new_booking",
      'Пётр, что беспокоит?\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {"name": ',
    );
    expect(bad.f.state.step).toBe("intro");
    expect(bad.f.notes?.join("\n")).toMatch(/STATE_JSON malformed/);
    const unknown = await turn(id, "Пётр", "new_booking", ["Секунду. [INTENT_CHANGE: dentist]"]);
    expect(unknown.f.events).toContain("tail_malformed");
    // Not a debugging client: no notes in its final.
    expect(unknown.f.notes).toBeUndefined();
    // The escalation branch has no way out: its signal is ignored, and says so.
    const esc = await newThread();
    await turn(esc, "Дайте человека", "escalate_human", ["Соединяю с администратором."]);
    const ign = await flagged(
      "signal_ignored",
      esc,
      "Ладно, запишите меня",
      "new_booking",
      "Администратор подключится. [INTENT_CHANGE: new_booking]",
    );
    expect(ign.f.state.activeBranch).toBe("escalate_human");
    expect(ign.f.reply).toBe("Администратор подключится.");
    const stored = (await thread(esc)).messages.at(-1)!;
    expect(stored.meta.events).toContain("signal_ignored");
    expect(String((stored.meta.notes as string[]).join("\n"))).toMatch(/ignored/);
  });
});

describe("past turns' debug data from their stored runs (issue 14 item 11)", () => {
  it("the thread's messages name their run; the run's stages hold the RAG fragments and the assembled prompt", async () => {
    const up = await uploadKb(server.url, A, {
      title: "Адрес",
      text: "# Адрес клиники\n\nКлиника находится по адресу: Москва, Лесная улица, 5.",
    });
    expect(up.status).toBe(201);
    const id = await newThread();
    await turn(id, "Какой у вас адрес?", "general_info", ["Мы на Лесной, 5."], true);
    const m = (await thread(id)).messages.at(-1)!;
    expect(typeof m.meta.runId).toBe("string");
    const r = await fetch(`${server.url}/v1/runs/${m.meta.runId}/stages`, { headers: A });
    expect(r.status).toBe(200);
    const { stages } = (await r.json()) as { stages: { name: string; data: Record<string, unknown> }[] };
    const doc = stages.find((s) => s.name === "documentation")!;
    expect(JSON.stringify(doc.data.fragments)).toContain("Лесная улица, 5");
    expect(String(stages.find((s) => s.name === "prompt-manifest")!.data.system)).toContain("Лесная улица, 5");
    // Another tenant does not see it; an unknown run is 404.
    expect(
      (await fetch(`${server.url}/v1/runs/${m.meta.runId}/stages`, { headers: { authorization: "Bearer tok-b" } }))
        .status,
    ).toBe(404);
    expect(
      (await fetch(`${server.url}/v1/runs/00000000-0000-0000-0000-000000000000/stages`, { headers: A })).status,
    ).toBe(404);
  });
});
