import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { asksForContact, phoneFromText } from "../../systems/clinic/contact";
import { EMERGENCY_REPLY } from "../../systems/clinic/templates";
import { useTestServer } from "../utils/server";
import { eventsNamed, postSse } from "../utils/sse";
import { useWebhookReceiver, testWebhookSecret, verifyDelivery } from "../utils/webhook-receiver";
import { workspace } from "../systems/workbench/fixtures";

/** The operators' inbox (issue 17 item 1) over the real HTTP server, a scripted model and a webhook receiver. */

const SECRET = testWebhookSecret("hook-secret");
const debugDir = mkdtempSync(join(tmpdir(), "inbox-debug-"));
const A = { authorization: "Bearer tok-a", "content-type": "application/json" };
const B = { authorization: "Bearer tok-b", "content-type": "application/json" };

const hook = useWebhookReceiver();
const server = useTestServer({
  llm: true,
  tokens: "a:tok-a:*,b:tok-b:*",
  env: () => ({
    RUN_DETACH_GRACE_MS: "0",
    WEBHOOK_URL: hook.url,
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_BACKOFF_MS: "40",
    WEBHOOK_MAX_ATTEMPTS: "3",
    AI_DEBUG: "true",
    DEBUG_DIR: debugDir,
  }),
});
const llm = server.llm;

const api = (path: string, init: RequestInit = {}, headers = A) => fetch(`${server.url}${path}`, { ...init, headers });
const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
async function newThread(headers = A): Promise<string> {
  return (await json<{ threadId: string }>(api("/v1/clinic/threads", { method: "POST", body: "{}" }, headers)))
    .threadId;
}
const say = (id: string, text: string, headers = A) =>
  postSse(`${server.url}/v1/clinic/threads/${id}/messages`, { text }, headers);
const final = (r: Awaited<ReturnType<typeof say>>) =>
  eventsNamed(r, "final")[0] as { reply: string; events: string[]; state: { activeBranch: string | null } };
type Item = {
  id: string;
  system: string;
  status: string;
  escalated: boolean;
  lastActivityAt: string;
  escalationReason: string | null;
  contactPhone: string | null;
  takenBy: string | null;
};
type Page = { items: Item[]; nextCursor: string | null };

async function escalate(text = "Позовите администратора, пожалуйста"): Promise<string> {
  const id = await newThread();
  llm.script("router", "escalate_human");
  llm.script("branch", "Передаю ваш вопрос администратору.");
  const r = await say(id, text);
  expect(final(r).events).toContain("escalated");
  return id;
}
const until = async (check: () => boolean | Promise<boolean>, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("phone numbers in a patient's words", () => {
  it("reads Russian numbers in any spelling and nothing else", () => {
    expect(phoneFromText("мой номер 8 (916) 123-45-67")).toBe("+79161234567");
    expect(phoneFromText("+7 916 123 45 67, звоните после 18")).toBe("+79161234567");
    expect(phoneFromText("9161234567")).toBe("+79161234567");
    expect(phoneFromText("+44 20 7946 0958")).toBe("+442079460958");
    expect(phoneFromText("записывалась 12.03.2024 на 10:30")).toBeNull();
    expect(phoneFromText("не дам номер")).toBeNull();
  });
  it("a reply that already asks for a phone is recognized; the emergency reply's «103 / 112» is not a request", () => {
    expect(asksForContact("Оставьте, пожалуйста, номер телефона")).toBe(true);
    expect(asksForContact("Напишите ваш телефон для связи")).toBe(true);
    expect(asksForContact(EMERGENCY_REPLY)).toBe(false);
    expect(asksForContact("Передаю ваш вопрос администратору.")).toBe(false);
  });
});

describe("operator inbox", () => {
  it("an escalation asks for a contact, stores the phone the patient sends, and is listed first with its reason", async () => {
    llm.reset();
    const calm = await newThread();
    llm.script("router", "general_info");
    llm.script("branch", "Мы работаем с 8 до 20.");
    await say(calm, "Когда вы работаете?");
    const id = await escalate();
    const th = await json<{
      state: Record<string, unknown>;
      messages: { role: string; text: string; meta: Record<string, unknown> }[];
    }>(api(`/v1/inbox/conversations/${id}`));
    expect(th.messages.at(-1)!.text).toBe(
      "Передаю ваш вопрос администратору.\n\nОставьте, пожалуйста, номер телефона — администратор перезвонит вам.",
    );
    // The reply shows the state after it whole, though stored without the fields at their initial values.
    const shown = th.messages.at(-1)!.meta;
    expect(JSON.stringify(Object.fromEntries(Object.keys(th.state).map((k) => [k, shown[k]])))).toBe(
      JSON.stringify(th.state),
    );
    expect(th.state).toMatchObject({ handoffCount: 0, softInsertionCount: 0, escalationReason: expect.any(String) });
    llm.script("router", "escalate_human");
    llm.script("branch", "Спасибо, администратор перезвонит.");
    await say(id, "Мой телефон +7 (916) 555-12-34");
    const list = await json<Page>(api("/v1/inbox/conversations"));
    expect(list.items[0]).toMatchObject({
      id,
      system: "clinic",
      status: "open",
      escalated: true,
      escalationReason: "explicit_request",
      contactPhone: "+79165551234",
    });
    expect(list.items.map((i) => i.id)).toContain(calm);
    expect(list.items.find((i) => i.id === calm)).toMatchObject({ escalated: false, contactPhone: null });
    // A red flag: the fixed emergency reply, nothing appended; still escalated for the inbox.
    const acute = await newThread();
    const em = final(await say(acute, "Сильное кровотечение, не могу дышать"));
    expect(em.reply).toBe(EMERGENCY_REPLY);
    expect(await json<Item>(api(`/v1/inbox/conversations/${acute}`))).toMatchObject({
      escalated: true,
      escalationReason: "acute_pain",
    });
    await api(`/v1/inbox/conversations/${acute}/close`, { method: "POST" });
    // Filters, and the per-system list.
    expect((await json<Page>(api("/v1/inbox/conversations?escalated=true"))).items.map((i) => i.id)).toEqual([id]);
    expect((await json<Page>(api("/v1/inbox/conversations?reason=explicit_request"))).items.map((i) => i.id)).toEqual([
      id,
    ]);
    expect((await json<Page>(api("/v1/inbox/conversations?system=workbench"))).items).toEqual([]);
    expect((await json<Page>(api("/v1/inbox/conversations?q=555-12-34"))).items.map((i) => i.id)).toEqual([id]);
    expect((await json<Page>(api("/v1/inbox/conversations?q=нет-такого-текста"))).items).toEqual([]);
    expect((await json<Page>(api("/v1/inbox/conversations?q=%2B7916555"))).items.map((i) => i.id)).toEqual([id]);
    expect((await json<Page>(api("/v1/inbox/conversations?q=работаете"))).items.map((i) => i.id)).toEqual([calm]);
    expect((await json<Page>(api("/v1/clinic/threads?escalated=false"))).items.map((i) => i.id)).toContain(calm);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await json<Page>(api(`/v1/inbox/conversations?from=${tomorrow}`))).items).toEqual([]);
    expect((await json<Page>(api(`/v1/inbox/conversations?to=${tomorrow}`))).items.length).toBeGreaterThanOrEqual(2);
    expect((await api("/v1/inbox/conversations?status=nope")).status).toBe(400);
    // Tenant-scoped: tenant b sees none of it.
    expect((await json<Page>(api("/v1/inbox/conversations", {}, B))).items).toEqual([]);
    expect((await api(`/v1/inbox/conversations/${id}`, {}, B)).status).toBe(404);
  });

  it("pages by cursor without repeats or gaps; a broken cursor is a 400", async () => {
    const ids = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await json<{ conversationId: string }>(api("/v1/workbench/conversations", { method: "POST", body: "{}" })))
          .conversationId,
      );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await json<Page>(
        api(`/v1/workbench/conversations?limit=2${cursor ? `&cursor=${cursor}` : ""}`),
      );
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await api("/v1/workbench/conversations?cursor=garbage")).status).toBe(400);
    // A well-formed cursor whose id is not a conversation id (a UUID) is as broken.
    const forged = Buffer.from(JSON.stringify([false, "1", "not-a-uuid"])).toString("base64url");
    expect((await api(`/v1/workbench/conversations?cursor=${forged}`)).status).toBe(400);
    // An id that is not a UUID names no conversation: 404 for every item route, nothing asked of the database.
    for (const [path, method] of [
      ["/v1/inbox/conversations/nope", "GET"],
      ["/v1/inbox/conversations/nope/take", "POST"],
      ["/v1/inbox/conversations/nope", "DELETE"],
    ] as const)
      expect((await api(path, { method, body: method === "POST" ? "{}" : undefined })).status).toBe(404);
    expect((await json<Page>(api("/v1/evidence/conversations"))).items).toEqual([]);
  });

  it("take holds the patient without a model call until release; close ends the escalation; the old release route still works", async () => {
    llm.reset();
    const id = await escalate("Соедините с оператором");
    const taken = await json<Item>(
      api(`/v1/inbox/conversations/${id}/take`, { method: "POST", body: JSON.stringify({ operator: "Мария" }) }),
    );
    expect(taken).toMatchObject({ status: "taken", takenBy: "Мария", escalated: true });
    const callsBefore = llm.calls.length;
    const held = await say(id, "Вы тут? 8 916 777 88 99");
    expect(final(held).reply).toBe(
      "Спасибо, номер записан — администратор перезвонит вам. Администратор (Мария) уже ведёт этот диалог и ответит вам здесь, в этом чате. Бот пока не отвечает; если станет хуже — звоните 103.",
    );
    expect(final(held).events).toEqual(["held_by_operator"]);
    expect(llm.calls.length).toBe(callsBefore);
    const detail = await json<Item & { messages: { text: string }[]; state: { activeBranch: string } }>(
      api(`/v1/inbox/conversations/${id}`),
    );
    expect(detail.contactPhone).toBe("+79167778899");
    expect(detail.messages.map((m) => m.text)).toContain("Вы тут? 8 916 777 88 99");
    expect(detail.state.activeBranch).toBe("escalate_human");
    const released = await json<Item>(api(`/v1/inbox/conversations/${id}/release`, { method: "POST" }));
    expect(released).toMatchObject({ status: "open", escalated: false, takenBy: null });
    expect(
      (await json<{ state: { activeBranch: string | null } }>(api(`/v1/clinic/threads/${id}`))).state.activeBranch,
    ).toBeNull();
    expect((await api(`/v1/inbox/conversations/${id}/release`, { method: "POST" })).status).toBe(409);
    // The bot answers again.
    llm.script("router", "general_info");
    llm.script("branch", "Мы работаем с 8 до 20.");
    expect(final(await say(id, "Когда вы работаете?")).reply).toBe("Мы работаем с 8 до 20.");
    // Its new messages put it first among those not waiting (last activity, moved by the statement that appends them).
    const byActivity = await json<Page>(api("/v1/inbox/conversations?escalated=false&system=clinic"));
    expect(byActivity.items[0]!.id).toBe(id);
    const times = byActivity.items.map((i) => Date.parse(i.lastActivityAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    // Close: not waiting any more.
    const again = await escalate("Позовите живого человека");
    expect(await json<Item>(api(`/v1/inbox/conversations/${again}/close`, { method: "POST" }))).toMatchObject({
      status: "closed",
      escalated: false,
    });
    // A patient writing into the closed thread opens it again (with the turn's messages, one statement).
    llm.script("router", "general_info");
    llm.script("branch", "Слушаю вас.");
    expect(final(await say(again, "Ещё вопрос")).reply).toBeTruthy();
    expect(await json<Item>(api(`/v1/inbox/conversations/${again}`))).toMatchObject({ status: "open" });
    // The clinic's own release (issue 14) clears the inbox flag too.
    const third = await escalate("Позовите администратора");
    expect((await api(`/v1/clinic/threads/${third}/release`, { method: "POST", body: "{}" })).status).toBe(200);
    expect(await json<Item>(api(`/v1/inbox/conversations/${third}`))).toMatchObject({
      escalated: false,
      status: "open",
    });
    // Only a clinic thread can be taken.
    const wb = (
      await json<{ conversationId: string }>(api("/v1/workbench/conversations", { method: "POST", body: "{}" }))
    ).conversationId;
    expect((await api(`/v1/inbox/conversations/${wb}/take`, { method: "POST" })).status).toBe(409);
  });

  it("the webhook gets one signed delivery per escalation after the commit, retried on failure, dead-lettered after the last attempt", async () => {
    llm.reset();
    hook.deliveries.length = 0;
    hook.failNext(500, 503);
    const id = await escalate("Позовите администратора");
    await until(() => hook.deliveries.some((d) => d.status === 200));
    const mine = hook.deliveries.filter((d) => d.json.conversationId === id);
    expect(mine.map((d) => d.status)).toEqual([500, 503, 200]);
    for (const d of mine) {
      // Standard Webhooks, verified by the stock library a receiver would use.
      expect(verifyDelivery(SECRET, d)).toEqual(d.json);
      expect(d.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(d.json).toMatchObject({
        seq: 1,
        event: "conversation.escalated",
        system: "clinic",
        conversationId: id,
        reason: "explicit_request",
        tenantId: "a",
      });
    }
    expect(new Set(mine.map((d) => d.headers["webhook-id"])).size).toBe(1);
    // A later turn of the same escalation is not a new escalation: no second delivery.
    llm.script("router", "escalate_human");
    llm.script("branch", "Администратор скоро ответит.");
    await say(id, "Жду");
    await new Promise((r) => setTimeout(r, 300));
    expect(hook.deliveries.filter((d) => d.json.conversationId === id)).toHaveLength(3);
    const [row] = await server.db.sql<
      { status: string; attempts: number }[]
    >`select status, attempts from outbox where conversation_id = ${id}`;
    expect(row).toEqual({ status: "delivered", attempts: 3 });

    // Every attempt fails: a dead letter with the last error.
    hook.failNext(500, 500, 500);
    const dead = await escalate("Соедините с оператором");
    await until(
      async () =>
        (await server.db.sql`select 1 from webhook_dead_letters where conversation_id = ${dead}`).length === 1,
    );
    const [dl] = await server.db.sql<
      { attempts: number; last_error: string }[]
    >`select attempts, last_error from webhook_dead_letters where conversation_id = ${dead}`;
    expect(dl).toEqual({ attempts: 3, last_error: "HTTP 500" });
    expect(hook.deliveries.filter((d) => d.json.conversationId === dead)).toHaveLength(3);
  });

  it("a turn that fails before its commit writes no outbox row and sends nothing", async () => {
    llm.reset();
    hook.deliveries.length = 0;
    const id = await newThread();
    llm.script("router", "escalate_human");
    llm.script("branch", { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    const r = await say(id, "Позовите администратора");
    expect(final(r).events).toEqual(["model_unavailable"]);
    await new Promise((r) => setTimeout(r, 200));
    expect(await server.db.sql`select 1 from outbox where conversation_id = ${id}`).toHaveLength(0);
    expect(hook.deliveries).toHaveLength(0);
  });

  it("erasure removes a clinic and a Workbench conversation from every table of the schema (enumerated from information_schema), and the debug files", async () => {
    llm.reset();
    const clinic = await escalate("Позовите администратора, мой номер 89161112233");
    await until(
      async () =>
        (await server.db.sql`select 1 from outbox where conversation_id = ${clinic} and status = 'delivered'`)
          .length === 1,
    );
    const wb = (
      await json<{ conversationId: string }>(api("/v1/workbench/conversations", { method: "POST", body: "{}" }))
    ).conversationId;
    llm.script("answer", "Композиция [[composition-alpha]] лежит в папке «Продажи».");
    const r = await postSse(
      `${server.url}/v1/workbench/conversations/${wb}/messages`,
      { text: "Покажи composition-alpha", workspace },
      A,
    );
    expect(eventsNamed(r, "final")).toHaveLength(1);
    const tables = await server.db.sql<{ table_name: string }[]>`
      select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`;
    // Every row of every table, as text: the conversation's id or one of its runs' ids anywhere in it.
    const holding = async (ids: string[]) => {
      const found: string[] = [];
      for (const { table_name } of tables) {
        const rows = await server.db.sql.unsafe(
          `select count(*)::int as n from "${table_name}" x where ${ids.map((_, i) => `strpos(x::text, $${i + 1}) > 0`).join(" or ")}`,
          ids,
        );
        if ((rows[0] as unknown as { n: number }).n > 0) found.push(table_name);
      }
      return found.sort();
    };
    // A run's events are in run_events only when a flush stored some before its end; the rest are in
    // its run row (migration 000027) — both tables are checked after the erasure either way.
    const expected = {
      [clinic]: ["conversations", "machine_events", "machine_snapshots", "messages", "outbox", "runs"],
      [wb]: ["conversations", "interactions", "machine_events", "machine_snapshots", "messages", "runs"],
    };
    for (const id of [clinic, wb]) {
      const runIds = (await server.db.sql<{ id: string }[]>`select id from runs where conversation_id = ${id}`).map(
        (x) => x.id,
      );
      expect(runIds.length).toBeGreaterThan(0);
      expect(await holding([id, ...runIds])).toEqual(expect.arrayContaining(expected[id]!));
      expect(runIds.some((x) => existsSync(join(debugDir, x)))).toBe(true);
      expect((await api(`/v1/inbox/conversations/${id}`, { method: "DELETE" }, B)).status).toBe(404);
      expect((await api(`/v1/inbox/conversations/${id}`, { method: "DELETE" })).status).toBe(204);
      expect(await holding([id, ...runIds])).toEqual([]);
      expect(runIds.filter((x) => existsSync(join(debugDir, x)))).toEqual([]);
      expect((await api(`/v1/inbox/conversations/${id}`)).status).toBe(404);
      expect((await api(`/v1/inbox/conversations/${id}`, { method: "DELETE" })).status).toBe(404);
    }
  });

  it("every table that names a conversation or a run reaches it by a cascading foreign key (a future table without one fails here)", async () => {
    const cols = await server.db.sql<{ table_name: string; column_name: string }[]>`
      select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and column_name in ('conversation_id', 'run_id', 'thread_id') order by table_name, column_name`;
    const fks = await server.db.sql<{ table_name: string; column_name: string; target: string; delete_rule: string }[]>`
      select kcu.table_name, kcu.column_name, ccu.table_name as target, rc.delete_rule
      from information_schema.referential_constraints rc
      join information_schema.key_column_usage kcu on kcu.constraint_name = rc.constraint_name and kcu.constraint_schema = rc.constraint_schema
      join information_schema.constraint_column_usage ccu on ccu.constraint_name = rc.unique_constraint_name and ccu.constraint_schema = rc.unique_constraint_schema
      where rc.constraint_schema = current_schema()`;
    const tablesNaming = [...new Set(cols.map((c) => c.table_name))];
    expect(tablesNaming).toEqual(
      expect.arrayContaining([
        "messages",
        "runs",
        "run_events",
        "machine_events",
        "evidence_runs",
        "interactions",
        "outbox",
        "webhook_dead_letters",
      ]),
    );
    const uncovered = tablesNaming.filter(
      (tbl) =>
        tbl !== "conversations" &&
        !fks.some(
          (f) => f.table_name === tbl && ["conversations", "runs"].includes(f.target) && f.delete_rule === "CASCADE",
        ),
    );
    expect(uncovered).toEqual([]);
  });
});
