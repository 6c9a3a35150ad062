import { describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { useWebhookReceiver } from "../utils/webhook-receiver";
import { clinicApi } from "../utils/clinic-api";

/**
 * Assignment and transfer (issue 43 item 4): an assignee on a thread and the «мои / не назначенные
 * / все» filter; a held thread handed to a colleague with no bot in between. Both are events of
 * the dialogue machine: logged (replayable), on the thread's stream, webhooked, counted in the stats.
 */

const TOKENS = [
  "operator@a:tok-maria:Мария",
  "operator@a:tok-oleg:Олег",
  "operator@a:tok-anna:Анна",
  "operator@a:tok-nobody",
  "chat@a:tok-chat",
].join(",");

const hook = useWebhookReceiver();
const server = useTestServer({
  llm: true,
  tokens: TOKENS,
  env: () => ({ RUN_DETACH_GRACE_MS: "0", WEBHOOK_URL: hook.url, WEBHOOK_SECRET: "s", WEBHOOK_BACKOFF_MS: "40" }),
});
const llm = server.llm;

const as = (token: string) => clinicApi(server.url, token);
const maria = () => as("tok-maria");
const oleg = () => as("tok-oleg");
type Item = { id: string; takenBy: string | null; assignedTo: string | null; status: string };
const errorOf = async (r: Response) =>
  ((await r.json()) as { error: { code: string; details?: { reason?: string } } }).error;
const assign = (token: string, id: string, assignee: string | null) =>
  as(token).post(`/v1/inbox/conversations/${id}/assign`, { assignee });
const transfer = (token: string, id: string, to: string) =>
  as(token).post(`/v1/inbox/conversations/${id}/transfer`, { to });
const ids = async (token: string, query: string) =>
  (await as(token).json<{ items: Item[] }>(as(token).api(`/v1/inbox/conversations?limit=100&${query}`))).items.map(
    (i) => i.id,
  );

const escalatedThread = () => as("tok-chat").escalated(llm);

describe("assignment", () => {
  it("an assignee on a thread nobody holds; «мои», «не назначенные», «все»; unknown people refused", async () => {
    const a = await escalatedThread();
    const b = await escalatedThread();
    const r = await assign("tok-maria", a, "Олег");
    expect(r.status).toBe(200);
    expect(((await r.json()) as Item).assignedTo).toBe("Олег");

    expect(await ids("tok-oleg", "assigned=me")).toContain(a);
    expect(await ids("tok-oleg", "assigned=me")).not.toContain(b);
    expect(await ids("tok-maria", "assigned=me")).not.toContain(a);
    expect(await ids("tok-maria", "assigned=none")).toContain(b);
    expect(await ids("tok-maria", "assigned=none")).not.toContain(a);
    expect(await ids("tok-maria", "assigned=all")).toEqual(expect.arrayContaining([a, b]));
    // «Мои» needs a token that is somebody.
    const anon = await as("tok-nobody").api("/v1/inbox/conversations?assigned=me");
    expect(anon.status).toBe(400);
    expect((await errorOf(anon)).details?.reason).toBe("no_operator_identity");

    const typo = await assign("tok-maria", b, "Олегг");
    expect(typo.status).toBe(400);
    expect((await errorOf(typo)).details?.reason).toBe("unknown_operator");
    expect((await assign("tok-maria", b, "\u200b")).status).toBe(400);

    // Unassign; the operators list names the tenant's people and who asks.
    expect(((await (await assign("tok-maria", a, null)).json()) as Item).assignedTo).toBeNull();
    const ops = await maria().json<{ operators: string[]; me: string | null }>(maria().api("/v1/inbox/operators"));
    expect(ops).toEqual({ operators: ["Анна", "Мария", "Олег"], me: "Мария" });
  });

  it("a take assigns the thread to whoever takes it; close clears it; a held thread is transferred, not assigned", async () => {
    const id = await escalatedThread();
    await assign("tok-maria", id, "Анна");
    const taken = (await (await oleg().take(id)).json()) as Item;
    expect(taken).toMatchObject({ takenBy: "Олег", assignedTo: "Олег" });
    const held = await assign("tok-maria", id, "Анна");
    expect(held.status).toBe(409);
    expect((await errorOf(held)).details?.reason).toBe("held");
    const closed = (await (await oleg().close(id)).json()) as Item;
    expect(closed.assignedTo).toBeNull();
  });
});

describe("transfer", () => {
  it("a held thread goes to a colleague with no bot in between; logged, on the patient's stream, webhooked, counted", async () => {
    const id = await escalatedThread();
    const tab = await as("tok-chat").follow(id);
    await maria().take(id);
    await maria().write(id, "Здравствуйте, это Мария.");
    const r = await transfer("tok-maria", id, "Олег");
    expect(r.status).toBe(200);
    expect((await r.json()) as Item).toMatchObject({ status: "taken", takenBy: "Олег", assignedTo: "Олег" });
    const ev = await tab.next((e) => e.event === "conversation.transferred");
    expect(ev.data).toMatchObject({ operator: "Мария", from: "Мария", to: "Олег", replies: 1 });
    tab.close();

    // No bot in between: the patient's message gets no model call, and the one who answers is Олег.
    const calls = llm.count();
    const turn = as("tok-chat").final(await as("tok-chat").say(id, "Вы тут?"));
    expect(llm.count()).toBe(calls);
    expect(turn.events).toContain("held_by_operator");
    // Олег writes; Мария's take is gone (she cannot take it back while he holds it).
    expect((await oleg().write(id, "Да, это Олег.")).status).toBe(201);
    const back = await maria().take(id);
    expect(back.status).toBe(409);
    expect((await errorOf(back)).details?.reason).toBe("taken_by_another");
    // A retry of the same transfer is a repeat; a transfer of a thread nobody holds is refused.
    expect((await transfer("tok-maria", id, "Олег")).status).toBe(200);
    await oleg().release(id);
    const free = await transfer("tok-oleg", id, "Анна");
    expect(free.status).toBe(409);
    expect((await errorOf(free)).details?.reason).toBe("not_held");

    // The machine's log replays to the stored snapshot.
    const replay = await maria().json<{ machines: { replayed: boolean; matches: boolean }[] }>(
      maria().api(`/v1/conversations/${id}/replay`),
    );
    for (const m of replay.machines) expect(m).toMatchObject({ replayed: true, matches: true });

    // Webhooked, in the stats.
    const end = Date.now() + 5_000;
    const mine = () => hook.deliveries.filter((d) => d.json.conversationId === id && d.status === 200);
    while (!mine().some((d) => d.json.event === "conversation.transferred")) {
      if (Date.now() > end) throw new Error(`webhook deliveries: ${JSON.stringify(mine().map((d) => d.json))}`);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(mine().find((d) => d.json.event === "conversation.transferred")!.json).toMatchObject({
      from: "Мария",
      to: "Олег",
      reason: "explicit_request",
    });
    const stats = await maria().json<{ handoffs: { reason: string; transferred: number; assigned: number }[] }>(
      maria().api("/v1/stats/outcomes"),
    );
    const row = stats.handoffs.find((h) => h.reason === "explicit_request")!;
    expect(row.transferred).toBeGreaterThanOrEqual(1);
    expect(row.assigned).toBeGreaterThanOrEqual(1);
  });
});
