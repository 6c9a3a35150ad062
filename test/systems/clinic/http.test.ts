import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SqlCounter } from "../../../bench/sql-count";
import { onServer } from "../../utils/db";
import { useTestServer } from "../../utils/server";
import { eventsNamed, postSse, type SseResponse } from "../../utils/sse";
import { clinicApi, stepTail } from "../../utils/clinic-api";
import { uploadKb } from "../../utils/systems-clinic";

// No background statement on the shared database while a test counts a turn's statements: the run
// heartbeat, the abandoned-run sweep and the reminder sweep of both servers come every 200 s / hour.
const QUIET = { RUN_STALE_MS: "600000", REMIND_SWEEP_MS: "3600000" };
const server = useTestServer({
  llm: true,
  tokens: "a:tok-a,b:tok-b",
  env: { RUN_DETACH_GRACE_MS: "0", ...QUIET },
});
const offline = useTestServer({ over: server, tokens: "a:tok-a", env: QUIET });
const llm = server.llm;
const A = { authorization: "Bearer tok-a", "content-type": "application/json" };
const B = { authorization: "Bearer tok-b", "content-type": "application/json" };

const newThread = (base = server.url, token = "tok-a") => clinicApi(base, token).newThread();
type Thread = {
  threadId: string;
  state: Record<string, unknown>;
  messages: { role: string; text: string; meta: Record<string, unknown> }[];
};
async function getThread(id: string, base = server.url, headers = A): Promise<Thread> {
  return (await (await fetch(`${base}/v1/clinic/threads/${id}`, { headers })).json()) as Thread;
}
function say(id: string, text: string, extra: object = {}, base = server.url, headers: Record<string, string> = A) {
  return postSse(`${base}/v1/clinic/threads/${id}/messages`, { text, ...extra }, headers);
}
const final = (r: SseResponse) =>
  eventsNamed(r, "final")[0] as { reply: string; state: Record<string, unknown>; events: string[] };
const tokens = (r: SseResponse) =>
  eventsNamed(r, "token")
    .map((e) => String(e.delta))
    .join("");

describe("clinic HTTP API (scripted OpenAI-compatible server)", () => {
  it("streams a booking turn: router_decision, tokens without the tail, final, done; the thread keeps messages and state", async () => {
    llm.reset();
    const id = await newThread();
    expect((await getThread(id)).state).toMatchObject({ activeBranch: null, step: null, handoffCount: 0 });
    llm.script("router", "new_booking");
    llm.script("branch", `Здравствуйте! Как к вам обращаться?${stepTail("intro", { specialist: "ЛОР" })}`);
    const r = await say(id, "Хочу записаться к ЛОРу");
    expect(r.events.map((e) => e.event)).toEqual(
      expect.arrayContaining(["run_started", "router_decision", "token", "final", "done"]),
    );
    expect(r.events.at(-1)!.event).toBe("done");
    expect(eventsNamed(r, "run_started")[0]).toHaveProperty("threadId", id);
    expect(eventsNamed(r, "router_decision")[0]).toEqual({ intent: "new_booking" });
    expect(eventsNamed(r, "stage")).toEqual([]);
    expect(tokens(r)).toBe("Здравствуйте! Как к вам обращаться?");
    expect(final(r)).toMatchObject({
      reply: "Здравствуйте! Как к вам обращаться?",
      state: { activeBranch: "new_booking", step: "intro", slots: { specialist: "ЛОР" } },
      events: [],
    });
    // Streamed: the branch call asked for stream: true; both calls name their role's model.
    expect(llm.calls.map((c) => [c.model, c.stream])).toEqual([
      ["test-router", false],
      ["test-branch", true],
    ]);
    const th = await getThread(id);
    expect(th.state).toEqual(final(r).state);
    expect(th.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "Хочу записаться к ЛОРу"],
      ["assistant", "Здравствуйте! Как к вам обращаться?"],
    ]);
    expect(th.messages[1]!.meta).toMatchObject({
      activeBranch: "new_booking",
      routerDecision: "new_booking",
      step: "intro",
      events: [],
    });
    // The branch saw the history on the next turn, never a tail.
    llm.script("router", "new_booking");
    llm.script("branch", `Алексей, что беспокоит?${stepTail("qualify", { name: "Алексей" })}`);
    await say(id, "Алексей");
    const branchCall = llm.calls.filter((c) => c.role === "branch").at(-1)!;
    expect(branchCall.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(JSON.stringify(branchCall.messages.slice(1))).not.toContain("STATE_JSON");
  });

  it("a handoff inside the turn: two branch calls, the signal never streamed; resume restores step and slots", async () => {
    llm.reset();
    const id = await newThread();
    llm.script("router", "new_booking");
    llm.script("branch", `Ольга, что беспокоит?${stepTail("qualify", { name: "Ольга", specialist: "кардиолог" })}`);
    await say(id, "Запишите к кардиологу, я Ольга");
    llm.script("router", "price_question");
    llm.script(
      "branch",
      { content: "[INTENT_CHANGE: price_question]", chunkDelayMs: 2 },
      "Общий анализ крови — 600 рублей.",
    );
    const r = await say(id, "А какие цены на анализы?");
    expect(tokens(r)).toBe("Общий анализ крови — 600 рублей.");
    expect(final(r)).toMatchObject({
      state: { activeBranch: "price_question", handoffCount: 1, suspended: { intent: "new_booking", step: "qualify" } },
    });
    expect(final(r).events).toEqual(expect.arrayContaining(["sticky", "handoff"]));
    expect(llm.calls.filter((c) => c.role === "branch").at(-2)!.messages[0]!.content).toContain("[ПОДСКАЗКА РОУТЕРА]");
    llm.script("router", "new_booking");
    llm.script("branch", `Продолжим.${stepTail("qualify")}`);
    const back = await say(id, "Давайте продолжим запись");
    expect(final(back)).toMatchObject({
      state: {
        activeBranch: "new_booking",
        step: "qualify",
        slots: { name: "Ольга", specialist: "кардиолог" },
        handoffCount: 0,
        suspended: null,
      },
      events: ["resumed"],
    });
  });

  it("a model failure after the one retry rolls the turn back and tells the patient", async () => {
    llm.reset();
    const id = await newThread();
    llm.script("router", "new_booking");
    llm.script("branch", `Как вас зовут?${stepTail("qualify")}`);
    await say(id, "Хочу к окулисту");
    const before = await getThread(id);
    llm.reset();
    llm.script("router", "new_booking");
    llm.script("branch", { status: 500 }, { status: 500 });
    const r = await say(id, "Пётр");
    expect(llm.count("branch")).toBe(2);
    expect(final(r)).toEqual({
      reply: expect.stringContaining("модель временно недоступна"),
      state: before.state,
      events: ["model_unavailable"],
    });
    expect(r.events.at(-1)!.event).toBe("done");
    expect(await getThread(id)).toEqual(before);
    // The router failing (twice) is the same: no trace.
    llm.script("router", { status: 503 }, { status: 503 });
    const r2 = await say(id, "Пётр");
    expect(final(r2).events).toEqual(["model_unavailable"]);
    expect(await getThread(id)).toEqual(before);
    // One failure is absorbed by the retry.
    llm.script("router", { status: 500 }, "new_booking");
    llm.script("branch", `Пётр, что беспокоит?${stepTail("qualify", { name: "Пётр" })}`);
    const r3 = await say(id, "Пётр");
    expect(final(r3).state).toMatchObject({ slots: { name: "Пётр" } });
  });

  it("property: whatever fails and when, a failed turn leaves neither messages nor state behind", async () => {
    const step = fc.record({ routerFails: fc.nat({ max: 2 }), branchFails: fc.nat({ max: 2 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 4 }), async (turns) => {
        const id = await newThread();
        for (const [i, s] of turns.entries()) {
          llm.reset();
          const before = await getThread(id);
          llm.script("router", ...Array(s.routerFails).fill({ status: 500 }), "new_booking");
          llm.script(
            "branch",
            ...Array(s.branchFails).fill({ status: 502 }),
            `Ответ ${i}.${stepTail(i === 0 ? "intro" : "qualify", { [`k${i}`]: i })}`,
          );
          const r = await say(id, `реплика ${i}`);
          const after = await getThread(id);
          const failed = s.routerFails === 2 || (s.routerFails < 2 && s.branchFails === 2);
          if (failed) {
            expect(final(r).events).toEqual(["model_unavailable"]);
            expect(after).toEqual(before);
          } else {
            expect(after.messages.length).toBe(before.messages.length + 2);
            expect(final(r).reply).toBe(`Ответ ${i}.`);
          }
        }
      }),
      { numRuns: 6 },
    );
  });

  it("keeps tenants apart and validates the body", async () => {
    const id = await newThread();
    expect((await fetch(`${server.url}/v1/clinic/threads/${id}`, { headers: B })).status).toBe(404);
    const post = await say(id, "привет", {}, server.url, B);
    expect(post.status).toBe(404);
    const bad = await say(id, "");
    expect(bad.status).toBe(400);
    expect((bad.json as { error: { code: string } }).error.code).toBe("invalid_request");
    expect((await fetch(`${server.url}/v1/clinic/threads/nope`, { headers: A })).status).toBe(404);
    // A missing thread is a 404 whatever the body, with an Idempotency-Key or without; nothing starts.
    expect((await say(id, "", {}, server.url, B)).status).toBe(404);
    expect((await say("nope", "")).status).toBe(404);
    expect((await say("nope", "привет")).status).toBe(404);
    expect((await say(id, "", {}, server.url, { ...B, "idempotency-key": "k-missing" })).status).toBe(404);
    expect((await say(id, "", {}, server.url, { ...A, "idempotency-key": "k-bad-body" })).status).toBe(400);
    expect(await server.db.sql`select id from runs where conversation_id = ${id}`).toHaveLength(0);
  });

  it("a turn without Idempotency-Key costs two statements: the read that starts the run, the commit", async () => {
    llm.reset();
    const id = await newThread();
    const turn = async (text: string) => {
      llm.script("router", "new_booking");
      llm.script("branch", `Здравствуйте! Подскажите, что беспокоит?${stepTail("qualify")}`);
      const r = await say(id, text);
      expect(eventsNamed(r, "done")).toHaveLength(1);
      return r;
    };
    await turn("Хочу записаться"); // the tenant's settings are loaded and cached by the first turn
    const counter = new SqlCounter();
    counter.attach(server.db.sql);
    let r: SseResponse;
    try {
      r = await turn("На приём к терапевту");
    } finally {
      counter.detach(server.db.sql);
    }
    expect(final(r).state).toMatchObject({ step: "qualify" });
    expect(counter.snapshot()).toMatchObject({
      statements: 2,
      transactions: 2,
      writingCommits: 2,
      // The run's start does not wait for a WAL flush on a server (the turn's commit makes it durable).
      asyncCommits: onServer ? 1 : 0,
    });
    const runId = r.headers.get("x-run-id")!;
    expect(await server.db.sql`select status from runs where id = ${runId}`).toEqual([{ status: "completed" }]);
  });

  it("knowledge base: upload, russian full-text search, fragments in the branch prompt and in the debug stages; re-index", async () => {
    const up = await uploadKb(server.url, A, {
      id: "info",
      title: "Справка о клинике",
      text: "## Часы работы\nКлиника работает ежедневно с 8:00 до 21:00.\n\n## Адрес\nМосква, Лесная улица, 5. Бесплатная парковка во дворе.\n\n## Услуги\nМРТ и КТ в клинике не проводятся.",
    });
    expect(up.status).toBe(201);
    expect(await up.json()).toEqual({ documentId: "info", version: 1, chunks: 3 });
    const search = (await (
      await fetch(`${server.url}/v1/clinic/kb/search?q=${encodeURIComponent("Где у вас парковка?")}`, { headers: A })
    ).json()) as { fragments: { docId: string; heading: string }[] };
    expect(search.fragments[0]).toMatchObject({ docId: "info", heading: "Адрес" });
    // Another tenant's knowledge base is empty.
    const other = (await (await fetch(`${server.url}/v1/clinic/kb/search?q=парковка`, { headers: B })).json()) as {
      fragments: unknown[];
    };
    expect(other.fragments).toEqual([]);

    llm.reset();
    const id = await newThread();
    llm.script("router", "general_info");
    llm.script("branch", "Да, бесплатная парковка во дворе.");
    const r = await say(id, "У вас есть парковка?", { debug: true });
    const stages = eventsNamed(r, "stage");
    const docs = stages.find((s) => s.stageId === "05")!.data as {
      fragments: { docId: string; heading: string; text: string }[];
    };
    expect(docs.fragments[0]).toMatchObject({ docId: "info", heading: "Адрес" });
    expect(stages.map((s) => s.stageId)).toEqual(expect.arrayContaining(["04", "05", "10", "11", "12"]));
    expect(llm.calls.find((c) => c.role === "branch")!.messages[0]!.content).toContain("Бесплатная парковка во дворе");

    const again = await uploadKb(server.url, A, { id: "info", title: "Справка", text: "Только часы: с 9 до 18." });
    expect(((await again.json()) as { version: number }).version).toBe(2);
    const re = await fetch(`${server.url}/v1/clinic/kb/documents/info/reindex`, { method: "POST", headers: A });
    expect(await re.json()).toMatchObject({ documentId: "info", version: 2, chunks: 1 });
    const gone = (await (await fetch(`${server.url}/v1/clinic/kb/search?q=парковка`, { headers: A })).json()) as {
      fragments: unknown[];
    };
    expect(gone.fragments).toEqual([]);
  });

  it("settings are versioned: a new step graph regenerates the machine; a new branch version changes the prompt", async () => {
    const graph = {
      initial: "start",
      steps: [
        { code: "start", prompt: "Узнай имя.", question: "Как вас зовут?", allowed_next: ["start", "details"] },
        {
          code: "details",
          prompt: "Узнай жалобу.",
          allowed_next: ["details", "done"],
          guards: { need_reason: { description: "нужна жалоба", required_slots: ["reason"] } },
        },
        { code: "done", prompt: "Попрощайся.", allowed_next: ["done"] },
      ],
    };
    const posted = await fetch(`${server.url}/v1/clinic/branches/new_booking/steps`, {
      method: "POST",
      headers: B,
      body: JSON.stringify({ graph }),
    });
    expect(posted.status).toBe(201);
    expect(await posted.json()).toEqual({ branch: "new_booking", version: 2, active: true });
    const v = await fetch(`${server.url}/v1/clinic/branches/general_info/versions`, {
      method: "POST",
      headers: B,
      body: JSON.stringify({ config: { system_prompt: "Ты — справочная клиники «Тест» (версия 2)." } }),
    });
    expect(await v.json()).toEqual({ code: "general_info", version: 2, active: true });

    llm.reset();
    const id = await newThread(server.url, "tok-b");
    llm.script("router", "new_booking", "new_booking", "new_booking");
    llm.script(
      "branch",
      `Как вас зовут?${stepTail("done", { name: "Ян" })}`,
      `Что беспокоит?${stepTail("details")}`,
      `Готово.${stepTail("done")}`,
    );
    const r1 = await say(id, "Запись", {}, server.url, B);
    expect(final(r1)).toMatchObject({
      state: { step: "start", slots: { name: "Ян" } },
      events: ["transition_rejected"],
    });
    expect(llm.calls.find((c) => c.role === "branch")!.messages[0]!.content).toContain("[ШАГ: start]");
    expect(final(await say(id, "Ян", {}, server.url, B)).state).toMatchObject({ step: "details" });
    const r3 = await say(id, "всё", {}, server.url, B);
    expect(final(r3)).toMatchObject({ state: { step: "details" }, events: ["guard_blocked:need_reason"] });
    // Tenant A still runs the seed graph.
    const a = (await (await fetch(`${server.url}/v1/clinic/branches`, { headers: A })).json()) as { versions: string };
    expect(a.versions).toContain("steps:new_booking@1");

    llm.script("router", "general_info");
    llm.script("branch", "Ответ.");
    await say(await newThread(server.url, "tok-b"), "Адрес?", {}, server.url, B);
    expect(llm.calls.filter((c) => c.role === "branch").at(-1)!.messages[0]!.content).toContain("(версия 2)");
    // Back to version 1 of the prompt.
    const act = await fetch(`${server.url}/v1/clinic/branches/general_info/versions/1/activate`, {
      method: "POST",
      headers: B,
    });
    expect(act.status).toBe(200);
    const versions = (await (
      await fetch(`${server.url}/v1/clinic/branches/general_info/versions`, { headers: B })
    ).json()) as { versions: { version: number; active: boolean }[] };
    expect(versions.versions.map((x) => [x.version, x.active])).toEqual([
      [1, true],
      [2, false],
    ]);
    const lastBranchSystem = () => llm.calls.filter((c) => c.role === "branch").at(-1)!.messages[0]!.content;
    llm.script("router", "general_info");
    llm.script("branch", "Ответ.");
    await say(await newThread(server.url, "tok-b"), "Адрес?", {}, server.url, B);
    expect(lastBranchSystem()).not.toContain("(версия 2)");
    // An edit made through another server on the same database shows at this one's next turn: nothing
    // tells a server about edits; the active versions are read with every turn's context.
    const other = await server.start({ llm: true, tokens: "a:tok-a,b:tok-b" });
    try {
      expect(
        (
          await fetch(`${other.url}/v1/clinic/branches/general_info/versions/2/activate`, {
            method: "POST",
            headers: B,
          })
        ).status,
      ).toBe(200);
    } finally {
      await other.stop();
    }
    llm.script("router", "general_info");
    llm.script("branch", "Ответ.");
    await say(await newThread(server.url, "tok-b"), "Адрес?", {}, server.url, B);
    expect(lastBranchSystem()).toContain("(версия 2)");
    const invalid = await fetch(`${server.url}/v1/clinic/branches/new_booking/steps`, {
      method: "POST",
      headers: B,
      body: JSON.stringify({ graph: { steps: [{ code: "a", prompt: "", allowed_next: ["zzz"] }] } }),
    });
    expect(invalid.status).toBe(400);
  });

  it("AI_DEBUG writes every numbered stage of the run to DEBUG_DIR, skipped ones included, no credential", async () => {
    const dir = mkdtempSync(join(tmpdir(), "clinic-debug-"));
    const dbg = await server.start({
      llm: true,
      tokens: "a:tok-a",
      env: { AI_DEBUG: "true", DEBUG_DIR: dir },
    });
    try {
      llm.reset();
      const id = await newThread(dbg.url);
      llm.script("router", "new_booking");
      llm.script("branch", `Как вас зовут?${stepTail("intro")}`);
      const r = await say(id, "Запишите меня", {}, dbg.url);
      const runId = String(eventsNamed(r, "run_started")[0]!.runId);
      const files = readdirSync(join(dir, runId)).sort();
      expect(files).toEqual(
        expect.arrayContaining([
          "00-metadata.json",
          "04-routing.json",
          "10-prompt-manifest.json",
          "11-model-request.json",
          "12-response-validation.json",
          "06-domain-resolution.json",
        ]),
      );
      expect(JSON.parse(readFileSync(join(dir, runId, "06-domain-resolution.json"), "utf8")).status).toBe("skipped");
      expect(JSON.parse(readFileSync(join(dir, runId, "10-prompt-manifest.json"), "utf8")).data.system).toContain(
        "[ШАГ: intro",
      );
      const all = files.map((f) => readFileSync(join(dir, runId, f), "utf8")).join("\n");
      expect(all).not.toContain("test-key");
    } finally {
      await dbg.stop();
    }
  });

  it("offline (no model configured): a sensible deterministic booking dialogue", async () => {
    const id = await newThread(offline.url);
    const r1 = await say(id, "Здравствуйте, хочу записаться к ЛОРу", {}, offline.url);
    expect(final(r1).state).toMatchObject({ activeBranch: "new_booking", step: "intro", slots: { specialist: "ЛОР" } });
    expect(tokens(r1)).toBe(final(r1).reply);
    const r2 = await say(id, "Алексей", {}, offline.url);
    expect(final(r2).state).toMatchObject({ step: "qualify", slots: { name: "Алексей" } });
    expect(final(r2).reply).not.toMatch(/STATE_JSON/);
  });
});
