import { beforeAll, describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { useTestServer } from "../utils/server";
import { followSse } from "../utils/sse";
import { clinicApi } from "../utils/clinic-api";
import { genitiveReady } from "../../http/genitive";

/**
 * The operator's desk around the inbox (issue 43 item 4) over real HTTP: quick replies per
 * tenant, internal notes that reach neither the patient nor the model, presence that is never
 * stored and expires without a heartbeat, and per-operator statistics.
 */

let c: ReturnType<typeof clinicApi>;
let b: ReturnType<typeof clinicApi>;
let patient: ReturnType<typeof clinicApi>;
const TTL_MS = 2_000;

const server = useTestServer({
  llm: true,
  tokens: "a:tok-a:*,b:tok-b:*,chat@a:tok-chat",
  env: { RUN_DETACH_GRACE_MS: "0", PRESENCE_TTL_MS: String(TTL_MS) },
});
const llm = server.llm;
beforeAll(async () => {
  c = clinicApi(server.url, "tok-a");
  b = clinicApi(server.url, "tok-b");
  patient = clinicApi(server.url, "tok-chat");
});

async function escalated(): Promise<string> {
  const id = await c.escalated(llm, "Позовите живого человека");
  // The patient's client holds the thread's credential, as the widget that started it would.
  patient.remember(id, c.credential(id)!);
  return id;
}

describe("quick replies", () => {
  it("create, list by title, update, refuse a duplicate title, delete — per tenant", async () => {
    const made = await c.post("/v1/inbox/quick-replies", { title: "адрес", text: "Мы на ул. Ленина, 1." });
    expect(made.status).toBe(201);
    const reply = (await made.json()) as { id: string; title: string; text: string };
    await c.post("/v1/inbox/quick-replies", { title: "Часы", text: "С 8 до 20 без выходных." });
    expect((await c.post("/v1/inbox/quick-replies", { title: "АДРЕС", text: "другой" })).status).toBe(409);
    expect((await c.post("/v1/inbox/quick-replies", { title: " ", text: "x" })).status).toBe(400);
    expect((await c.post("/v1/inbox/quick-replies", { title: "x", text: "\u200b" })).status).toBe(400);

    const list = await c.json<{ items: { title: string }[] }>(c.api("/v1/inbox/quick-replies"));
    expect(list.items.map((i) => i.title)).toEqual(["адрес", "Часы"]);
    // Another tenant sees none of them and may use the same title.
    expect((await b.json<{ items: unknown[] }>(b.api("/v1/inbox/quick-replies"))).items).toEqual([]);
    expect((await b.post("/v1/inbox/quick-replies", { title: "адрес", text: "Наш адрес другой." })).status).toBe(201);
    expect(
      (await b.api(`/v1/inbox/quick-replies/${reply.id}`, { method: "PUT", body: JSON.stringify(reply) })).status,
    ).toBe(404);

    const put = await c.api(`/v1/inbox/quick-replies/${reply.id}`, {
      method: "PUT",
      body: JSON.stringify({ title: "адрес", text: "Мы на ул. Ленина, 1, вход со двора." }),
    });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { text: string }).text).toContain("вход со двора");
    expect((await c.api(`/v1/inbox/quick-replies/${reply.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await c.api(`/v1/inbox/quick-replies/${reply.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await c.api("/v1/inbox/quick-replies/not-a-uuid", { method: "DELETE" })).status).toBe(404);
    // A patient's token has no business here.
    expect((await patient.api("/v1/inbox/quick-replies")).status).toBe(403);
  });
});

describe("internal notes", () => {
  it("are for operators only: not in the patient's stream, the thread's messages, the inbox transcript or any prompt", async () => {
    const id = await escalated();
    const stream = await patient.follow(id);
    expect((await c.take(id, "Мария")).status).toBe(200);
    const SECRET = "Пациент раньше жаловался на персонал, говорить мягко";
    const added = await c.post(`/v1/inbox/conversations/${id}/notes`, { text: SECRET, operator: "Мария" });
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({ author: "Мария", text: SECRET });
    expect((await c.post(`/v1/inbox/conversations/${id}/notes`, { text: "  " })).status).toBe(400);
    expect((await patient.post(`/v1/inbox/conversations/${id}/notes`, { text: "x" })).status).toBe(403);
    expect((await patient.api(`/v1/inbox/conversations/${id}/notes`)).status).toBe(403);
    // Another tenant cannot read or add to it.
    expect((await b.api(`/v1/inbox/conversations/${id}/notes`)).status).toBe(404);

    const notes = await c.json<{ items: { text: string }[] }>(c.api(`/v1/inbox/conversations/${id}/notes`));
    expect(notes.items.map((n) => n.text)).toEqual([SECRET]);

    // The operator writes, releases; the bot's next turn builds its prompt from the history.
    expect((await c.write(id, "Здравствуйте, я Мария, слушаю вас.")).status).toBe(201);
    expect((await c.release(id)).status).toBe(200);
    llm.script("router", "general_info");
    llm.script("branch", "Мы работаем с 8 до 20.");
    const before = llm.calls.length;
    await patient.say(id, "А когда вы работаете?");
    const prompts = llm.calls.slice(before);
    expect(prompts.length).toBeGreaterThan(0);
    const promptText = JSON.stringify(prompts.map((p) => p.messages));
    expect(promptText).toContain("Здравствуйте, я Мария"); // the history is there…
    expect(promptText).not.toContain(SECRET); // …the note is not

    await stream.next((e) => e.event === "conversation.released");
    expect(JSON.stringify(stream.events)).not.toContain(SECRET);
    stream.close();
    const thread = await patient.json<{ messages: { text: string }[] }>(patient.api(`/v1/clinic/threads/${id}`));
    expect(thread.messages.map((m) => m.text).join("\n")).toContain("Здравствуйте, я Мария");
    expect(JSON.stringify(thread)).not.toContain(SECRET);
    expect(JSON.stringify(await c.json(c.api(`/v1/inbox/conversations/${id}`)))).not.toContain(SECRET);
    // A replay of the stream from the start carries no note either.
    const replay = await patient.follow(id, 0);
    await replay.next((e) => e.event === "conversation.released");
    expect(JSON.stringify(replay.events)).not.toContain(SECRET);
    replay.close();
  });
});

describe("presence", () => {
  it("«Мария печатает», «открыто у Ивана» on the inbox stream; «оператор печатает» on the patient's; expires without a heartbeat; never stored", async () => {
    const id = await escalated();
    const desk = await followSse(`${server.url}/v1/inbox/presence`, { authorization: "Bearer tok-a" });
    const otherTenant = await followSse(`${server.url}/v1/inbox/presence`, { authorization: "Bearer tok-b" });
    const stream = await patient.follow(id);
    await desk.next((e) => e.event === "presence.snapshot");

    const seen = await c.json<{ viewing: string[]; typing: string[] }>(
      c.post(`/v1/inbox/conversations/${id}/presence`, { state: "viewing", operator: "Иван" }),
    );
    expect(seen).toMatchObject({ conversationId: id, viewing: ["Иван"], typing: [] });
    // The name declined for «открыто у Ивана» (once the dictionary has loaded: the next heartbeat has it).
    await genitiveReady();
    const again = await c.json<{ genitive: Record<string, string> }>(
      c.post(`/v1/inbox/conversations/${id}/presence`, { state: "viewing", operator: "Иван" }),
    );
    expect(again.genitive).toEqual({ Иван: "Ивана" });
    await desk.next((e) => e.event === "presence" && (e.data as { viewing: string[] }).viewing.includes("Иван"));
    await c.post(`/v1/inbox/conversations/${id}/presence`, { state: "typing", operator: "Мария" });
    const typing = await desk.next(
      (e) => e.event === "presence" && (e.data as { typing: string[] }).typing.includes("Мария"),
    );
    expect(typing.data).toEqual({
      conversationId: id,
      viewing: ["Иван", "Мария"],
      typing: ["Мария"],
      genitive: { Иван: "Ивана", Мария: "Марии" },
    });
    expect(typing.id).toBeUndefined();

    // The patient hears that someone types — not who merely has the thread open.
    const on = await stream.next((e) => e.event === "operator.typing");
    expect(on.data).toEqual({ typing: true, operator: "Мария" });
    expect(on.id).toBeUndefined();
    expect(stream.events.some((e) => JSON.stringify(e.data).includes("Иван"))).toBe(false);

    // Without a heartbeat both signals expire, and the followers are told.
    await desk.next((e) => e.event === "presence" && (e.data as { viewing: string[] }).viewing.length === 0, 10_000);
    const off = await stream.next((e) => e.event === "operator.typing" && !(e.data as { typing: boolean }).typing);
    expect(off.data).toEqual({ typing: false, operator: null });

    // Nothing of it was stored: the thread's log and a resumed stream have no presence.
    const replay = await patient.follow(id, 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(replay.events.map((e) => e.event)).not.toContain("operator.typing");
    replay.close();
    const [stored] = await server.db.sql<{ n: number }[]>`
      select count(*)::int as n from thread_events where conversation_id = ${id} and kind not in
        ('conversation.taken', 'operator.message', 'conversation.released', 'conversation.closed', 'patient.message')`;
    expect(stored!.n).toBe(0);

    // «left» ends a signal at once; another tenant hears nothing of this one.
    await c.post(`/v1/inbox/conversations/${id}/presence`, { state: "viewing", operator: "Иван" });
    const left = await c.json<{ viewing: string[] }>(
      c.post(`/v1/inbox/conversations/${id}/presence`, { state: "left", operator: "Иван" }),
    );
    expect(left.viewing).toEqual([]);
    expect(otherTenant.events.filter((e) => e.event === "presence")).toEqual([]);
    expect((await b.post(`/v1/inbox/conversations/${id}/presence`, { state: "viewing" })).status).toBe(404);
    expect((await patient.post(`/v1/inbox/conversations/${id}/presence`, { state: "typing" })).status).toBe(403);
    expect((await c.post(`/v1/inbox/conversations/${id}/presence`, { state: "dancing" })).status).toBe(400);
    for (const s of [desk, otherTenant, stream]) s.close();
  });
});

describe("per-operator statistics in /v1/stats/outcomes", () => {
  it("taken, first replies and their time, messages, per operator", async () => {
    const one = await escalated();
    const two = await escalated();
    await c.take(one, "Ольга");
    await c.write(one, "Здравствуйте!", undefined, "Ольга");
    await c.write(one, "Уточните, пожалуйста, время.", undefined, "Ольга");
    await c.take(two, "Пётр");
    await c.write(two, "Добрый день.", undefined, "Пётр");
    const stats = await c.json<{ byOperator: Record<string, unknown>[] }>(c.api("/v1/stats/outcomes"));
    const of = (name: string) => stats.byOperator.find((o) => o.operator === name);
    expect(of("Ольга")).toMatchObject({ taken: 1, firstReplies: 1, messages: 2, transfersOut: 0, transfersIn: 0 });
    expect(of("Пётр")).toMatchObject({ taken: 1, firstReplies: 1, messages: 1 });
    expect(typeof of("Ольга")!.avgTimeToFirstReplyMs).toBe("number");
    // Another tenant's operators are not counted here.
    const other = await b.json<{ byOperator: unknown[] }>(b.api("/v1/stats/outcomes"));
    expect(other.byOperator).toEqual([]);
  });

  it("every desk of the tenant hears at once that a thread changed hands — escalated, taken, released, closed — and no other tenant", async () => {
    const desk = await followSse(`${server.url}/v1/inbox/presence`, { authorization: "Bearer tok-a" });
    const otherTenant = await followSse(`${server.url}/v1/inbox/presence`, { authorization: "Bearer tok-b" });
    await desk.next((e) => e.event === "presence.snapshot");
    await otherTenant.next((e) => e.event === "presence.snapshot");
    // A patient's turn that escalates: the desk hears it when the turn has committed.
    const escalatedNews = desk.next(
      (e) => e.event === "handling" && (e.data as { kind: string }).kind === "escalate",
      5_000,
    );
    const id = await escalated();
    expect((await escalatedNews).data).toEqual({ conversationId: id, kind: "escalate" });
    const heard = (kind: string) =>
      desk.next((e) => e.event === "handling" && (e.data as { kind: string }).kind === kind, 5_000);
    for (const kind of ["take", "release", "close"] as const) {
      const news = heard(kind);
      const body = kind === "take" ? { operator: "Иван" } : {};
      expect((await c.post(`/v1/inbox/conversations/${id}/${kind}`, body)).status).toBe(200);
      expect((await news).data).toEqual({ conversationId: id, kind });
    }
    // A refused action (409: nothing to release) changes no hands and tells nobody.
    expect((await c.post(`/v1/inbox/conversations/${id}/release`, {})).status).toBe(409);
    await new Promise((r) => setTimeout(r, 300));
    expect(desk.events.filter((e) => e.event === "handling").map((e) => (e.data as { kind: string }).kind)).toEqual([
      "escalate",
      "take",
      "release",
      "close",
    ]);
    expect(otherTenant.events.filter((e) => e.event === "handling")).toEqual([]);
    desk.close();
    otherTenant.close();
  });

  it("counts transfers from the event log by their kind", async () => {
    const id = await escalated();
    // The transfer action writes this event kind (TRANSFER_EVENT_KIND); written here directly.
    await server.db.sql`insert into thread_events (conversation_id, seq, kind, data)
      select ${id}, coalesce(max(seq), 0) + 1, 'conversation.transferred', ${server.db.sql.json({ from: "Зоя", to: "Яна" } as never)}
        from thread_events where conversation_id = ${id}`;
    const stats = await c.json<{ byOperator: Record<string, unknown>[] }>(c.api("/v1/stats/outcomes"));
    expect(stats.byOperator.find((o) => o.operator === "Зоя")).toMatchObject({ transfersOut: 1, transfersIn: 0 });
    expect(stats.byOperator.find((o) => o.operator === "Яна")).toMatchObject({ transfersOut: 0, transfersIn: 1 });
  });
});

describe.skipIf(!onServer)("presence across servers (PostgreSQL: LISTEN/NOTIFY)", () => {
  it("a heartbeat on one server reaches the inbox and the patient's stream followed on another, and expires there", async () => {
    const other = await server.start({
      llm: true,
      tokens: "a:tok-a:*,chat@a:tok-chat",
      env: { RUN_DETACH_GRACE_MS: "0", PRESENCE_TTL_MS: String(TTL_MS) },
    });
    try {
      const id = await escalated();
      const there = clinicApi(other.url, "tok-chat");
      there.remember(id, c.credential(id)!);
      const desk = await followSse(`${other.url}/v1/inbox/presence`, { authorization: "Bearer tok-a" });
      const stream = await there.follow(id);
      await desk.next((e) => e.event === "presence.snapshot");
      // The other server's LISTEN is open once its presence stream is: heartbeats until it hears one.
      const heard = desk.next(
        (e) => e.event === "presence" && (e.data as { typing: string[] }).typing.includes("Мария"),
        10_000,
      );
      const beats = setInterval(
        () => void c.post(`/v1/inbox/conversations/${id}/presence`, { state: "typing", operator: "Мария" }),
        300,
      );
      try {
        await heard;
        expect((await stream.next((e) => e.event === "operator.typing", 10_000)).data).toEqual({
          typing: true,
          operator: "Мария",
        });
      } finally {
        clearInterval(beats);
      }
      // No more heartbeats: the other server lets it expire by itself.
      await stream.next((e) => e.event === "operator.typing" && !(e.data as { typing: boolean }).typing, 10_000);
      desk.close();
      stream.close();
    } finally {
      await other.stop();
    }
  });
});
