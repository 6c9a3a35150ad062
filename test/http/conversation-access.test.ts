import { beforeAll, describe, expect, it } from "vitest";
import { CONVERSATION_TOKEN_HEADER } from "../../http/conversation-access";
import { documentedOperations } from "../../http/openapi/document";
import { useEvidenceMcp } from "../../systems/evidence/routes";
import { dialogueSystems } from "../../systems";
import { useTestServer } from "../utils/server";
import { postSse } from "../utils/sse";

/**
 * Issue 47 item 6: a conversation belongs to whoever started it. Every route the three systems
 * (and the gateway's run routes) document as needing the conversation's credential is called by a
 * `chat` token with no credential, with another conversation's, and with its own: 404, 404, 2xx —
 * and the 404 is the body a missing conversation (or run) gets. The route list is the documented
 * one, checked against the routes expected here, so a route that loses its declaration fails.
 */

const TOKENS = "a:tok-admin,chat@a:tok-chat,operator@a:tok-op,chat@a:tok-bridge:*";
const server = useTestServer({ llm: true, tokens: TOKENS, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;
const MISSING = "00000000-0000-4000-8000-000000000000";

const auth = (token: string, credential?: string): Record<string, string> => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
  ...(credential ? { [CONVERSATION_TOKEN_HEADER]: credential } : {}),
});

interface Conv {
  id: string;
  token: string;
}
async function create(path: string, token = "tok-chat"): Promise<Conv> {
  const r = await fetch(`${server.url}${path}`, { method: "POST", headers: auth(token), body: "{}" });
  expect(r.status).toBe(201);
  const body = (await r.json()) as { threadId?: string; conversationId?: string; conversationToken: string };
  // The body and the header carry the same credential.
  expect(body.conversationToken).toMatch(/^cc_[\w-]{43}$/);
  expect(r.headers.get(CONVERSATION_TOKEN_HEADER)).toBe(body.conversationToken);
  return { id: (body.threadId ?? body.conversationId)!, token: body.conversationToken };
}

/** The conversations, their runs and interaction, and a second conversation per system (its credential is "another"). */
const mine: Record<string, Conv> = {};
const other: Record<string, Conv> = {};
const ids: Record<string, string> = {};

beforeAll(async () => {
  await useEvidenceMcp(server.deps, {
    endpoint: { kind: "http", url: `${server.url}/v1/evidence/mcp`, headers: { authorization: "Bearer tok-admin" } },
  });
  for (const [system, path] of [
    ["clinic", "/v1/clinic/threads"],
    ["workbench", "/v1/workbench/conversations"],
    ["evidence", "/v1/evidence/conversations"],
  ] as const) {
    mine[system] = await create(path);
    other[system] = await create(path);
  }
  // One turn each, with the credential: the runs and the interaction the run routes name.
  llm.script("router", "general_info");
  llm.script("branch", 'Мы на Лесной, 5.\nSTATE_JSON: {"state_after": "answered", "slots_updated": {}}');
  const clinic = await postSse(
    `${server.url}/v1/clinic/threads/${mine.clinic!.id}/messages`,
    { text: "Какой у вас адрес?", debug: true },
    auth("tok-chat", mine.clinic!.token),
  );
  expect(clinic.status).toBe(200);
  ids.clinicRun = clinic.headers.get("x-run-id")!;
  const wb = await postSse(
    `${server.url}/v1/workbench/conversations/${mine.workbench!.id}/messages`,
    { text: "Что такое поле?" },
    auth("tok-chat", mine.workbench!.token),
  );
  expect(wb.status).toBe(200);
  ids.interaction = (wb.events.find((e) => e.event === "run_started")!.data as { interactionId: string }).interactionId;
  const ev = await postSse(
    `${server.url}/v1/evidence/conversations/${mine.evidence!.id}/messages`,
    { text: "Сколько стоит приём?" },
    auth("tok-chat", mine.evidence!.token),
  );
  expect(ev.status).toBe(200);
  ids.evidenceRun = ev.headers.get("x-run-id")!;
}, 60_000);

/** Each documented credential route: the system whose credential it needs, the id it names for `mine`, and a body. */
const cases: Record<string, { system: string; id: () => string; body?: unknown }> = {
  "GET /v1/clinic/threads/{threadId}": { system: "clinic", id: () => mine.clinic!.id },
  "POST /v1/clinic/threads/{threadId}/messages": {
    system: "clinic",
    id: () => mine.clinic!.id,
    body: { text: "А когда вы работаете?" },
  },
  "GET /v1/clinic/threads/{threadId}/events": { system: "clinic", id: () => mine.clinic!.id },
  "GET /v1/workbench/conversations/{id}": { system: "workbench", id: () => mine.workbench!.id },
  "POST /v1/workbench/conversations/{id}/messages": {
    system: "workbench",
    id: () => mine.workbench!.id,
    body: { text: "Что такое поле?" },
  },
  "GET /v1/workbench/interactions/{id}": { system: "workbench", id: () => ids.interaction! },
  "GET /v1/evidence/conversations/{id}": { system: "evidence", id: () => mine.evidence!.id },
  "POST /v1/evidence/conversations/{id}/messages": {
    system: "evidence",
    id: () => mine.evidence!.id,
    body: { text: "А в субботу?" },
  },
  "GET /v1/evidence/runs/{runId}": { system: "evidence", id: () => ids.evidenceRun! },
  "GET /v1/runs/{runId}/events": { system: "clinic", id: () => ids.clinicRun! },
  "GET /v1/runs/{runId}/stages": { system: "clinic", id: () => ids.clinicRun! },
};
/** The route's documented path with this id in its one parameter. */
const pathOf = (route: string, id: string) => route.split(" ")[1]!.replace(/\{\w+\}/, id);

/** A request's status and JSON error (a stream is cut after its headers: a thread's events never end). */
async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const ac = new AbortController();
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers,
    signal: ac.signal,
    ...(method === "POST" ? { body: JSON.stringify(body ?? {}) } : {}),
  });
  const stream = res.headers.get("content-type")?.includes("text/event-stream");
  if (stream && method === "GET") {
    ac.abort();
    return { status: res.status, error: null };
  }
  const text = await res.text();
  return { status: res.status, error: stream ? null : (JSON.parse(text) as { error: unknown }).error };
}

/** An error body without the id it names (a run's 404 names the run asked for). */
const shape = (e: unknown) => {
  const { details, ...rest } = e as { details?: Record<string, unknown> };
  const { runId: _r, ...d } = details ?? {};
  return { ...rest, details: d };
};

describe("a conversation's credential over every conversation route of the three systems", () => {
  it("the routes that need it are the documented conversation routes", () => {
    const declared = documentedOperations(dialogueSystems)
      .filter((op) => op.credential === "required")
      .map((op) => `${op.method.toUpperCase()} ${op.path}`)
      .sort();
    expect(declared).toEqual(Object.keys(cases).sort());
    const issued = documentedOperations(dialogueSystems)
      .filter((op) => op.credential === "issued")
      .map((op) => `${op.method.toUpperCase()} ${op.path}`)
      .sort();
    expect(issued).toEqual([
      "POST /v1/clinic/threads",
      "POST /v1/conversations/{conversationId}/credential",
      "POST /v1/evidence/conversations",
      "POST /v1/workbench/conversations",
    ]);
  });

  for (const [name, k] of Object.entries(cases)) {
    it(`${name}: none → 404, another's → 404 (as a missing one), its own → 2xx`, async () => {
      const method = name.split(" ")[0]!;
      const path = pathOf(name, k.id());
      const missing = await call(method, pathOf(name, MISSING), auth("tok-chat", mine[k.system]!.token), k.body);
      expect(missing.status).toBe(404);
      const none = await call(method, path, auth("tok-chat"), k.body);
      expect(none.status).toBe(404);
      expect(shape(none.error)).toEqual(shape(missing.error));
      const wrong = await call(method, path, auth("tok-chat", other[k.system]!.token), k.body);
      expect(wrong.status).toBe(404);
      expect(shape(wrong.error)).toEqual(shape(missing.error));
      const garbage = await call(method, path, auth("tok-chat", "cc_not-a-credential"), k.body);
      expect(garbage.status).toBe(404);
      const right = await call(method, path, auth("tok-chat", mine[k.system]!.token), k.body);
      expect(right.status).toBeGreaterThanOrEqual(200);
      expect(right.status).toBeLessThan(300);
      // Operators and admins reach it without one; so does an integration (`…:TOKEN:*`).
      for (const tok of ["tok-op", "tok-admin", "tok-bridge"]) {
        if (method === "POST" && tok !== "tok-bridge") continue; // the role policy keeps operators off the patient's turn
        const r = await call(method, path, auth(tok), k.body);
        expect(r.status, `${tok} ${name}`).toBeLessThan(300);
      }
    }, 30_000);
  }

  it("the conversation-level 404 is the missing conversation's body: code not_found, reason conversation_not_found", async () => {
    const r = await call("GET", `/v1/clinic/threads/${mine.clinic!.id}`, auth("tok-chat"));
    expect(r.error).toEqual({
      code: "not_found",
      message: "Такого диалога нет.",
      details: { reason: "conversation_not_found" },
    });
  });

  it("an EventSource passes the credential as ?conversation_token= on a stream; elsewhere a URL credential is refused", async () => {
    const q = (token: string) => `conversation_token=${encodeURIComponent(token)}&access_token=tok-chat`;
    const stream = await fetch(`${server.url}/v1/runs/${ids.clinicRun}/events?${q(mine.clinic!.token)}`, {
      headers: { accept: "text/event-stream" },
    });
    expect(stream.status).toBe(200);
    expect(await stream.text()).toContain("event: done");
    // An EventSource is told "nothing here" (204) for another's run, as for a missing one: it stops reconnecting.
    const foreign = await fetch(`${server.url}/v1/runs/${ids.clinicRun}/events?${q(other.clinic!.token)}`, {
      headers: { accept: "text/event-stream" },
    });
    expect(foreign.status).toBe(204);
    const plain = await fetch(
      `${server.url}/v1/clinic/threads/${mine.clinic!.id}?conversation_token=${mine.clinic!.token}`,
      { headers: auth("tok-chat") },
    );
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { error: { message: string } }).error.message).toMatch(/X-Conversation-Token/);
  });

  it("a turn refused for a missing credential starts no run", async () => {
    const before = await server.db.sql`select count(*)::int as n from runs where conversation_id = ${mine.clinic!.id}`;
    const r = await postSse(
      `${server.url}/v1/clinic/threads/${mine.clinic!.id}/messages`,
      { text: "Привет" },
      auth("tok-chat", other.clinic!.token),
    );
    expect(r.status).toBe(404);
    const after = await server.db.sql`select count(*)::int as n from runs where conversation_id = ${mine.clinic!.id}`;
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it("only a hash is stored: the credential itself is nowhere in the conversation's row", async () => {
    const [row] = await server.db.sql`select * from conversations where id = ${mine.clinic!.id}`;
    expect(JSON.stringify(row)).not.toContain(mine.clinic!.token);
    expect(row!.credential_sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
