// The Workbench answer through the validated stream (doc/streaming.md): a rejected sentence never
// reaches the client as `token`; `answer_replaced` precedes `final`; final, the stored message
// and the replacement agree; a passing answer streams unchanged.
import { beforeEach, describe, expect, it } from "vitest";
import { useTestServer } from "../../utils/server";
import { eventsNamed, type SseResponse } from "../../utils/sse";
import { workspace } from "./fixtures";
import { WorkbenchSseEvent } from "../../../systems/workbench/contract";
import { newConversation, one, send, stage, type Json } from "./http-workbench-helpers";

const server = useTestServer({ llm: true, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

beforeEach(() => llm.reset());

async function ask(text: string): Promise<{ conv: string; r: SseResponse }> {
  const conv = await newConversation(server.url);
  const r = await send(server.url, conv, { text, workspace, debug: true });
  expect(r.status).toBe(200);
  return { conv, r };
}

const tokens = (r: SseResponse) => (eventsNamed(r, "token") as Json[]).map((e) => e.delta as string).join("");
const names = (r: SseResponse) => r.events.map((e) => e.event);

async function storedAnswer(conv: string): Promise<Json> {
  const res = await fetch(`${server.url}/v1/workbench/conversations/${conv}`);
  const body = (await res.json()) as { messages: Json[] };
  return body.messages.filter((m) => m.role === "assistant").at(-1)!;
}

/** The rejected answer's effects, the same whatever made it rejected. */
async function expectReplaced(conv: string, r: SseResponse, rejected: string, code: string) {
  const streamed = tokens(r);
  expect(streamed).not.toContain(rejected);
  for (const e of eventsNamed(r, "token") as Json[]) expect(e.delta).not.toContain(rejected);
  const order = names(r);
  expect(order.indexOf("answer_replaced")).toBeGreaterThan(-1);
  expect(order.indexOf("answer_replaced")).toBeLessThan(order.indexOf("final"));
  // Nothing streams after the replacement.
  expect(order.slice(order.indexOf("answer_replaced")).includes("token")).toBe(false);
  // Every event is what the OpenAPI document says the stream carries.
  for (const e of r.events) expect(WorkbenchSseEvent.safeParse(e).success, e.event).toBe(true);
  const replaced = one(r, "answer_replaced")!;
  const fin = one(r, "final")!;
  expect(replaced.reason).toBe("validation_failed");
  expect((replaced.issues as string[]).some((i) => i.startsWith(code))).toBe(true);
  expect(fin.answer).toBe(replaced.text);
  expect(fin.answer).not.toContain(rejected);
  expect(fin.validation.ok).toBe(false);
  expect((fin.validation.issues as Json[]).map((i) => i.code)).toContain(code);
  // The replacement cites only what was given to the model, so every citation is in context.
  for (const c of fin.entityCitations as string[]) expect(fin.answer).toContain(`[[${c}]]`);
  const stored = await storedAnswer(conv);
  expect(stored.text).toBe(fin.answer);
  expect(stored.meta.validationOk).toBe(false);
  // The run keeps what the model said and what reached the client (stage 12 in the debug trace).
  const s12 = stage(r, "12")!.data;
  expect(s12.replaced).toBe(true);
  expect(s12.modelAnswer).toContain(rejected);
  expect(s12.released).toBe(streamed);
  return { fin, streamed };
}

describe("workbench: the validated answer stream", () => {
  it("a passing answer streams unchanged, sentence by sentence, with no replacement", async () => {
    const answer =
      "Композиция [[composition-alpha]] лежит в папке [[folder-sales]]. Она называется «Объект Альфа».\nДругих документов с этим именем нет.";
    llm.script("answer", answer);
    const { conv, r } = await ask("Покажи composition-alpha");
    expect(eventsNamed(r, "token").length).toBeGreaterThan(1);
    expect(tokens(r)).toBe(answer);
    expect(names(r)).not.toContain("answer_replaced");
    const fin = one(r, "final")!;
    expect(fin).toMatchObject({
      answer,
      validation: { ok: true, issues: [] },
      entityCitations: ["composition-alpha", "folder-sales"],
    });
    expect((await storedAnswer(conv)).text).toBe(answer);
  });

  it("an identity never given to the model, mid-answer: its sentence never streams, the answer is replaced", async () => {
    // composition-kalina exists in the workspace but was not passed for this request.
    const first = "Композиция [[composition-alpha]] лежит в папке [[folder-sales]]. ";
    const bad = "Её использует композиция [[composition-kalina]].";
    llm.script("answer", { content: `${first}${bad} Больше ничего.`, chunkDelayMs: 2 });
    const { conv, r } = await ask("Покажи composition-alpha");
    const { streamed, fin } = await expectReplaced(conv, r, "composition-kalina", "not_in_context");
    // The sentence before the rejected one had passed and was shown; the client then replaced it.
    expect(streamed).toBe(first);
    expect(fin.answer).toContain("[[composition-alpha]]");
    expect(fin.entityCitations).not.toContain("composition-kalina");
  });

  it("an identity that does not exist at all is rejected before it streams", async () => {
    llm.script(
      "answer",
      "Подробности — в [[composition-omega]], там всё описано. А [[composition-alpha]] — в папке продаж.",
    );
    const { conv, r } = await ask("Покажи composition-alpha");
    const { streamed } = await expectReplaced(conv, r, "composition-omega", "unknown_identity");
    expect(streamed).toBe("");
  });

  it("a claimed edit mid-answer («Готово: я изменил формулу…») never streams", async () => {
    const first = "Композиция [[composition-alpha]] находится в папке «Продажи».\n";
    const bad = "Готово: я изменил формулу расчёта в этой композиции";
    llm.script("answer", {
      content: `${first}${bad}, теперь скидка считается иначе. Проверьте результат.`,
      chunkDelayMs: 2,
    });
    const { conv, r } = await ask("Покажи composition-alpha");
    const { streamed } = await expectReplaced(conv, r, "я изменил", "claimed_change");
    expect(streamed).toBe(first);
  });

  it("a problem only the whole text shows (an answer in JSON) replaces what was released", async () => {
    // Each sentence alone passes, so all of it streams; only the whole is raw JSON.
    const answer = '{"answer": "Композиция [[composition-alpha]] проверена. Она в папке «Продажи»."}';
    llm.script("answer", answer);
    const { conv, r } = await ask("Покажи composition-alpha");
    expect(tokens(r)).toBe(answer);
    const fin = one(r, "final")!;
    expect(fin.validation.ok).toBe(false);
    expect(fin.validation.issues.map((i: Json) => i.code)).toContain("raw_json");
    expect(names(r).indexOf("answer_replaced")).toBeLessThan(names(r).indexOf("final"));
    expect(fin.answer).toBe(one(r, "answer_replaced")!.text);
    expect(fin.answer).not.toContain('{"answer"');
    expect((await storedAnswer(conv)).text).toBe(fin.answer);
  });

  it("a stream broken after a released sentence is an error: no replacement, no stored answer", async () => {
    llm.script("answer", {
      content: "Композиция [[composition-alpha]] лежит в папке «Продажи».\nОна считает скидку по сумме заказа.",
      truncateAfter: 64,
    });
    const { conv, r } = await ask("Покажи composition-alpha");
    expect(tokens(r)).toBe("Композиция [[composition-alpha]] лежит в папке «Продажи».\n");
    expect(names(r)).not.toContain("answer_replaced");
    expect(names(r)).not.toContain("final");
    expect(one(r, "error")).toMatchObject({ code: "model_unavailable" });
    const res = await fetch(`${server.url}/v1/workbench/conversations/${conv}`);
    expect(((await res.json()) as { messages: Json[] }).messages.filter((m) => m.role === "assistant")).toEqual([]);
  });

  it("the OpenAPI document describes answer_replaced", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(Object.keys(doc.components.schemas.AnswerReplaced!.properties!)).toEqual(["text", "reason", "issues"]);
    expect(JSON.stringify(doc.components.schemas.WorkbenchSseEvent)).toContain("answer_replaced");
  });
});
