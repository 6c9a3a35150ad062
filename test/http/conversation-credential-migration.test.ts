import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../http/config";
import { CONVERSATION_TOKEN_HEADER } from "../../http/conversation-access";
import { runMigrations } from "../../storage/migrate";
import { migrateBefore } from "../utils/db";
import { useTestServer, type StartedTestServer } from "../utils/server";

/**
 * Issue 47 item 6, the migration path: a conversation created before credentials existed
 * (migration 000044) has none. By default (CONVERSATION_LEGACY_ACCESS off) a `chat` token no
 * longer reaches it; an admin issues it a credential (POST /v1/conversations/{id}/credential),
 * which then works, and a second one replaces the first. With the setting on, such a conversation
 * stays open to the tenant's `chat` tokens until it gets a credential — never one that has one.
 */
const TOKENS = "a:tok-admin,chat@a:tok-chat,operator@a:tok-op,chat@b:tok-chat-b";
const OLD = "01a24146-7fbd-7fe0-9e1e-d04585ee1f01";
const OLD_WB = "01a24146-7fbd-7fe0-9e1e-d04585ee1f02";
// Unmigrated: the rows are stored the way they were before migration 000044, then the servers start.
const s = useTestServer({ migrate: false, serve: false });
let strict: StartedTestServer;
let legacy: StartedTestServer;

beforeAll(async () => {
  const sql = s.db.sql;
  await migrateBefore(sql, 44);
  await sql`insert into conversations (id, tenant_id, kind) values (${OLD}, 'a', 'clinic'), (${OLD_WB}, 'a', 'workbench')`;
  expect(await runMigrations(sql)).toEqual(expect.arrayContaining(["000044_conversation_credentials.sql"]));
  strict = await s.start({ tokens: TOKENS });
  legacy = await s.start({ tokens: TOKENS, env: { CONVERSATION_LEGACY_ACCESS: "true" } });
}, 120_000);

const get = (url: string, path: string, token: string, credential?: string) =>
  fetch(`${url}${path}`, {
    headers: { authorization: `Bearer ${token}`, ...(credential ? { [CONVERSATION_TOKEN_HEADER]: credential } : {}) },
  });
const issue = (url: string, id: string, token = "tok-admin") =>
  fetch(`${url}/v1/conversations/${id}/credential`, { method: "POST", headers: { authorization: `Bearer ${token}` } });

describe("conversations created before credentials", () => {
  it("the migration leaves them without one", async () => {
    const rows = await s.db.sql`select credential_sha256 from conversations where id in (${OLD}, ${OLD_WB})`;
    expect(rows.map((r) => r.credential_sha256)).toEqual([null, null]);
  });

  it("with CONVERSATION_LEGACY_ACCESS on, a chat token of the tenant still reads one; off (the default), 404", async () => {
    expect((await get(legacy.url, `/v1/workbench/conversations/${OLD_WB}`, "tok-chat")).status).toBe(200);
    expect((await get(legacy.url, `/v1/workbench/conversations/${OLD_WB}`, "tok-chat-b")).status).toBe(404);
    expect((await get(strict.url, `/v1/workbench/conversations/${OLD_WB}`, "tok-chat")).status).toBe(404);
    // Operators are unaffected either way.
    expect((await get(strict.url, `/v1/workbench/conversations/${OLD_WB}`, "tok-op")).status).toBe(200);
  });

  it("the legacy window never opens a conversation that has a credential", async () => {
    const created = await fetch(`${legacy.url}/v1/clinic/threads`, {
      method: "POST",
      headers: { authorization: "Bearer tok-chat" },
    });
    const { threadId, conversationToken } = (await created.json()) as { threadId: string; conversationToken: string };
    expect((await get(legacy.url, `/v1/clinic/threads/${threadId}`, "tok-chat")).status).toBe(404);
    expect((await get(legacy.url, `/v1/clinic/threads/${threadId}`, "tok-chat", conversationToken)).status).toBe(200);
  });

  it("an admin issues one: it works on both servers, the legacy window closes, a second replaces the first", async () => {
    expect((await issue(strict.url, OLD, "tok-op")).status).toBe(403);
    expect((await issue(strict.url, OLD, "tok-chat")).status).toBe(403);
    const missing = await issue(strict.url, "01a24146-7fbd-7fe0-9e1e-d04585ee1fff");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { details: unknown } }).error.details).toEqual({
      reason: "conversation_not_found",
    });

    const first = await issue(strict.url, OLD);
    expect(first.status).toBe(201);
    const one = (await first.json()) as { conversationToken: string; replaced: boolean; kind: string };
    expect(one).toMatchObject({ conversationId: OLD, kind: "clinic", replaced: false });
    expect(first.headers.get(CONVERSATION_TOKEN_HEADER)).toBe(one.conversationToken);
    for (const url of [strict.url, legacy.url]) {
      expect((await get(url, `/v1/clinic/threads/${OLD}`, "tok-chat", one.conversationToken)).status).toBe(200);
      expect((await get(url, `/v1/clinic/threads/${OLD}`, "tok-chat")).status).toBe(404);
    }

    const second = (await (await issue(strict.url, OLD)).json()) as { conversationToken: string; replaced: boolean };
    expect(second.replaced).toBe(true);
    expect((await get(strict.url, `/v1/clinic/threads/${OLD}`, "tok-chat", one.conversationToken)).status).toBe(404);
    expect((await get(strict.url, `/v1/clinic/threads/${OLD}`, "tok-chat", second.conversationToken)).status).toBe(200);
  });
});

describe("CONVERSATION_LEGACY_ACCESS is validated at start", () => {
  it("true/false (1/0); off by default; anything else stops the start naming the setting", () => {
    expect(loadConfig({}).conversations.legacyAccess).toBe(false);
    expect(loadConfig({ CONVERSATION_LEGACY_ACCESS: "true" }).conversations.legacyAccess).toBe(true);
    expect(loadConfig({ CONVERSATION_LEGACY_ACCESS: "0" }).conversations.legacyAccess).toBe(false);
    expect(() => loadConfig({ CONVERSATION_LEGACY_ACCESS: "yes" })).toThrow(
      /CONVERSATION_LEGACY_ACCESS="yes": expected true or false/,
    );
  });
});
