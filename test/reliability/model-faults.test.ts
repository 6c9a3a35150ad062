import { describe, expect, it } from "vitest";
import { MODEL_UNAVAILABLE_REPLY } from "../../systems/clinic/templates";
import { useTestServer } from "../utils/server";
import type { ScriptStep } from "../utils/scripted-llm";
import { eventsNamed, postSse, type SseResponse } from "../utils/sse";
import { registerTestRoutes } from "../utils/test-routes";
import { workspace } from "../systems/workbench/fixtures";
import { newConversation } from "../systems/workbench/http-workbench-helpers";
import { clinicApi } from "../utils/clinic-api";

/**
 * Model faults from the scripted OpenAI-compatible server — 5xx, timeouts, a dropped
 * connection, a stream cut short, a stream that stalls, broken JSON — through real HTTP turns:
 * each turn fails cleanly (error then done) or falls back, and never leaves half a turn stored.
 */
const TIMEOUT_MS = 1_000;
const t = useTestServer({
  llm: true,
  env: { RUN_DETACH_GRACE_MS: "0" },
  extend: registerTestRoutes,
  configure: (config) => void (config.llm.timeoutMs = TIMEOUT_MS),
});
const llm = t.llm;

interface Stored {
  messages: number;
  rowVersion: number | null;
}

async function stored(conversationId: string): Promise<Stored> {
  const [m] = await t.db.sql<
    { n: number }[]
  >`select count(*)::int as n from messages where conversation_id = ${conversationId}`;
  const [s] = await t.db.sql<
    { v: number }[]
  >`select max(row_version) as v from machine_snapshots where conversation_id = ${conversationId}`;
  return { messages: m!.n, rowVersion: s?.v ?? null };
}

async function runOf(r: SseResponse) {
  const runId = eventsNamed(r, "run_started")[0]!.runId as string;
  const [row] = await t.db.sql<
    { status: string; error_code: string | null }[]
  >`select status, error_code from runs where id = ${runId}`;
  return row!;
}

/** Every stream ends with done, ids increasing by one. */
function wellFormed(r: SseResponse) {
  expect(r.status).toBe(200);
  expect(r.events.at(-1)!.event).toBe("done");
  expect(r.events.map((e) => Number(e.id))).toEqual(r.events.map((_, i) => i + 1));
}

describe("model faults: the generic streamed turn (test dialogue)", () => {
  const conversation = async () =>
    (
      (await (await fetch(`${t.url}/v1/test/conversations`, { method: "POST" })).json()) as {
        conversationId: string;
      }
    ).conversationId;
  const turn = (id: string, text = "вопрос") => postSse(`${t.url}/v1/test/conversations/${id}/messages`, { text });

  /** One good turn first, so "unchanged" means something: then the fault, then the check. */
  async function faulty(steps: ScriptStep[], expectCalls: number) {
    const id = await conversation();
    llm.reset();
    llm.script("answer", "первый ответ");
    await turn(id, "первый");
    const before = await stored(id);
    llm.reset();
    llm.script("answer", ...steps);
    const started = Date.now();
    const r = await turn(id);
    wellFormed(r);
    expect(llm.count("answer")).toBe(expectCalls);
    return { id, r, before, after: await stored(id), ms: Date.now() - started };
  }

  async function expectCleanFailure(x: Awaited<ReturnType<typeof faulty>>) {
    expect(eventsNamed(x.r, "final")).toHaveLength(0);
    expect(eventsNamed(x.r, "error")[0]).toMatchObject({ code: "model_unavailable" });
    expect(x.after).toEqual(x.before);
    expect(await runOf(x.r)).toEqual({ status: "failed", error_code: "model_unavailable" });
  }

  it("500 twice: two calls, then model_unavailable; nothing stored", async () => {
    await expectCleanFailure(await faulty([{ status: 500 }, { status: 502 }], 2));
  });

  it("400: not retried", async () => {
    await expectCleanFailure(await faulty([{ status: 400 }, "не вызывается"], 1));
  });

  it("no answer within the timeout, twice: model_unavailable in about two timeouts", async () => {
    const x = await faulty(
      [
        { content: "поздно", delayMs: TIMEOUT_MS * 3 },
        { content: "поздно", delayMs: TIMEOUT_MS * 3 },
      ],
      2,
    );
    await expectCleanFailure(x);
    expect(x.ms).toBeLessThan(TIMEOUT_MS * 2 + 2_000);
  });

  it("a dropped connection, then an answer: the one retry recovers the turn", async () => {
    const x = await faulty([{ hangUp: true }, "со второй попытки"], 2);
    expect(eventsNamed(x.r, "final")[0]).toMatchObject({ answer: "со второй попытки" });
    expect(x.after).toEqual({ messages: x.before.messages + 2, rowVersion: x.before.rowVersion! + 1 });
  });

  it("a stream cut after its first tokens: not retried (the tokens were shown), fails cleanly", async () => {
    const x = await faulty(
      [{ content: "начало ответа, которое оборвётся посередине", truncateAfter: 16 }, "не вызывается"],
      1,
    );
    expect(eventsNamed(x.r, "token").length).toBeGreaterThan(0);
    await expectCleanFailure(x);
  });

  it("a stream cut before any content: retried once", async () => {
    const x = await faulty([{ content: "оборвётся", truncateAfter: 0 }, "целый ответ"], 2);
    expect(eventsNamed(x.r, "final")[0]).toMatchObject({ answer: "целый ответ" });
  });

  it("broken JSON inside the stream: fails cleanly", async () => {
    await expectCleanFailure(
      await faulty([{ content: "ответ с мусором внутри", rawChunk: '{"choices": [' }, "не вызывается"], 1),
    );
  });

  it("a stream that stalls after its first tokens: given up within the timeout, fails cleanly", async () => {
    const x = await faulty(
      [{ content: "ответ, который замрёт на полпути и больше ничего не пришлёт", stallAfter: 16 }, "не вызывается"],
      1,
    );
    await expectCleanFailure(x);
    expect(x.ms).toBeLessThan(TIMEOUT_MS + 3_000);
  });

  it("a stream that stalls before any content: retried, then fails cleanly", async () => {
    const x = await faulty(
      [
        { content: "ничего", stallAfter: 0 },
        { content: "ничего", stallAfter: 0 },
      ],
      2,
    );
    await expectCleanFailure(x);
    expect(x.ms).toBeLessThan(TIMEOUT_MS * 2 + 3_000);
  });
});

describe("model faults: clinic turns fall back to a fixed reply and store nothing", () => {
  const thread = async () => await clinicApi(t.url).newThread();
  const turn = (id: string, text: string) => postSse(`${t.url}/v1/clinic/threads/${id}/messages`, { text });

  async function faulty(router: ScriptStep[], branch: ScriptStep[]) {
    const id = await thread();
    llm.reset();
    llm.script("router", "general_info");
    llm.script("branch", "Здравствуйте!");
    await turn(id, "Добрый день");
    const before = await stored(id);
    llm.reset();
    if (router.length) llm.script("router", ...router);
    if (branch.length) llm.script("branch", ...branch);
    const r = await turn(id, "Сколько стоит приём?");
    wellFormed(r);
    return { r, before, after: await stored(id) };
  }

  const cases: [string, ScriptStep[], ScriptStep[]][] = [
    ["router 500 twice", [{ status: 500 }, { status: 500 }], []],
    [
      "router timeout twice",
      [
        { content: "general_info", delayMs: TIMEOUT_MS * 3 },
        { content: "general_info", delayMs: TIMEOUT_MS * 3 },
      ],
      [],
    ],
    [
      "branch stream cut after tokens",
      ["general_info"],
      [{ content: "Приём стоит две тысячи рублей, запись по телефону", truncateAfter: 16 }],
    ],
    [
      "branch stream stalls",
      ["general_info"],
      [{ content: "Приём стоит две тысячи рублей, запись по телефону", stallAfter: 8 }],
    ],
  ];
  for (const [name, router, branch] of cases) {
    it(name, async () => {
      const x = await faulty(router, branch);
      const final = eventsNamed(x.r, "final")[0];
      expect(final).toMatchObject({ reply: MODEL_UNAVAILABLE_REPLY, events: ["model_unavailable"] });
      expect(x.after).toEqual(x.before);
    });
  }

  it("a router that answers broken JSON: no decision, the turn goes on without trusting it", async () => {
    const x = await faulty(
      ['{"intent": "new_booking', "```json\n{oops}\n```"],
      ["Чем могу помочь?", "Чем могу помочь?"],
    );
    expect(eventsNamed(x.r, "error")).toHaveLength(0);
    const final = eventsNamed(x.r, "final")[0]!;
    expect(final.reply).toBeTruthy();
    // Either the whole turn is stored or none of it.
    expect([x.before.messages, x.before.messages + 2]).toContain(x.after.messages);
  });
});

describe("model faults: Workbench preparatory roles answering garbage fall back, never fail the run", () => {
  it("reranker and planner with broken JSON: the run still ends with a clarification or an answer", async () => {
    const conv = await newConversation(t.url);
    llm.reset();
    llm.script("planner", "{not json", "{not json");
    llm.script("reranker", '{"choice": "c99"}', '```json\n{"choice":', '{"choice": "c99"}');
    llm.script("answer", "Ответ.");
    const r = await postSse(`${t.url}/v1/workbench/conversations/${conv}/messages`, {
      text: "Покажи композицию «Расчёт скидки»",
      workspace,
    });
    wellFormed(r);
    expect(eventsNamed(r, "error")).toHaveLength(0);
    expect(eventsNamed(r, "final").length + eventsNamed(r, "clarification_required").length).toBe(1);
  });
});
