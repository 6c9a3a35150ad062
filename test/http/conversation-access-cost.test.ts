import { describe, expect, it } from "vitest";
import { SqlCounter } from "../../bench/sql-count";
import { useTestServer } from "../utils/server";
import { readSse } from "../utils/sse";

/**
 * What the conversation's credential costs (issue 47 item 6): the check is a condition of the
 * statement that looks the conversation (or its run) up, so a `chat` request with its credential
 * sends exactly as many statements as the same request by an admin token, which is checked for
 * nothing — on the turn path (the clinic's one first statement reads, checks and starts the run)
 * and on every read. Counted by postgres.js's debug hook (bench/sql-count.ts), on both databases.
 */
// No periodic sweep meanwhile: only the requests' own statements are counted.
const server = useTestServer({
  llm: true,
  tokens: "a:tok-admin,chat@a:tok-chat",
  env: { RUN_SWEEP_MS: "600000", RUN_DETACH_GRACE_MS: "0" },
});
const llm = server.llm;
const counter = new SqlCounter();

/** Statements the server sends for one request (the whole response read). */
async function cost(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<number> {
  counter.reset();
  counter.attach(server.db.sql);
  try {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    await readSse(res);
    // A turn's last writes (the run's close) may follow the response's end by a moment.
    await new Promise((r) => setTimeout(r, 150));
    return counter.snapshot().statements;
  } finally {
    counter.detach(server.db.sql);
  }
}

describe("the credential costs no statement", () => {
  it("a chat request with its credential sends as many statements as an admin's", async () => {
    const created = (await (
      await fetch(`${server.url}/v1/clinic/threads`, { method: "POST", headers: { authorization: "Bearer tok-chat" } })
    ).json()) as { threadId: string; conversationToken: string };
    const id = created.threadId;
    const admin = { authorization: "Bearer tok-admin" };
    const chat = { authorization: "Bearer tok-chat", "x-conversation-token": created.conversationToken };
    const turn = () => {
      llm.script("router", "general_info");
      llm.script("branch", 'Мы на Лесной, 5.\nSTATE_JSON: {"state_after": "answered", "slots_updated": {}}');
      return { text: "Какой у вас адрес?" };
    };
    const rows: { route: string; admin: number; chat: number }[] = [];
    const measure = async (route: string, method: string, path: string, body?: () => unknown, key = false) => {
      const k = (): Record<string, string> => (key ? { "idempotency-key": crypto.randomUUID() } : {});
      // Warm once (a first call caches settings and prepares statements), then measure each.
      await cost(method, path, { ...admin, ...k() }, body?.());
      const a = await cost(method, path, { ...admin, ...k() }, body?.());
      const c = await cost(method, path, { ...chat, ...k() }, body?.());
      rows.push({ route, admin: a, chat: c });
    };
    await measure("POST /v1/clinic/threads/{id}/messages (a turn)", "POST", `/v1/clinic/threads/${id}/messages`, turn);
    await measure("POST …/messages with Idempotency-Key", "POST", `/v1/clinic/threads/${id}/messages`, turn, true);
    await measure("GET /v1/clinic/threads/{id}", "GET", `/v1/clinic/threads/${id}`);
    const [run] = await server.db.sql<{ id: string }[]>`select id from runs where conversation_id = ${id} limit 1`;
    await measure("GET /v1/runs/{runId}/stages", "GET", `/v1/runs/${run!.id}/stages`);
    await measure("GET /v1/runs/{runId}/events (replay)", "GET", `/v1/runs/${run!.id}/events`);
    console.log(
      ["| route | admin (no check) | chat + credential |", "| --- | --- | --- |"]
        .concat(rows.map((r) => `| ${r.route} | ${r.admin} | ${r.chat} |`))
        .join("\n"),
    );
    for (const r of rows) expect(r.chat, r.route).toBe(r.admin);
  }, 120_000);
});
