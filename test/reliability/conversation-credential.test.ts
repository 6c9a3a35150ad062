import { describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { postSse } from "../utils/sse";

/**
 * Issue 47's attack 6, as an operator of a production install sees it: a web widget ships one
 * `chat` token to every patient, and a thread id leaks (a shared screen, a support ticket, a
 * log). A second patient with the same token and the leaked id reads the thread, follows its
 * runs and live events — as an EventSource, token and credential in the URL — and writes to it:
 * every attempt is the 404 (204 for an EventSource) a missing thread gets, and changes no row.
 * The thread's own client, with its credential, is served as before.
 */
const WIDGET = "chat@clinic:tok-widget";
const server = useTestServer({ llm: true, tokens: WIDGET, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

const widget = (credential?: string): Record<string, string> => ({
  authorization: "Bearer tok-widget",
  "content-type": "application/json",
  ...(credential ? { "x-conversation-token": credential } : {}),
});

describe("a conversation read without its credential (404)", () => {
  it("a leaked thread id and the shared widget token reach nothing of another patient's thread", async () => {
    // Patient A starts a thread and talks.
    const created = await fetch(`${server.url}/v1/clinic/threads`, { method: "POST", headers: widget() });
    const { threadId, conversationToken } = (await created.json()) as { threadId: string; conversationToken: string };
    llm.script("router", "general_info");
    llm.script("branch", 'Приём с 9 до 18.\nSTATE_JSON: {"state_after": "answered", "slots_updated": {}}');
    const turn = await postSse(
      `${server.url}/v1/clinic/threads/${threadId}/messages`,
      { text: "Когда вы работаете? Меня зовут Анна Петрова" },
      widget(conversationToken),
    );
    expect(turn.status).toBe(200);
    const runId = turn.headers.get("x-run-id")!;

    // Patient B has the same token and A's thread id (and run id), not A's credential.
    const rows = async () =>
      (
        await server.db.sql`select (select count(*) from messages)::int + (select count(*) from runs)::int
          + (select count(*) from thread_events)::int as n`
      )[0]!.n as number;
    const before = await rows();
    const missing = "01a24146-7fbd-7fe0-9e1e-d04585ee1f99";
    const readMissing = await fetch(`${server.url}/v1/clinic/threads/${missing}`, { headers: widget() });
    const missingBody = await readMissing.json();

    const read = await fetch(`${server.url}/v1/clinic/threads/${threadId}`, { headers: widget() });
    expect(read.status).toBe(404);
    expect(await read.json()).toEqual(missingBody);
    const text = JSON.stringify(missingBody);
    expect(text).not.toContain("Анна");

    const write = await postSse(
      `${server.url}/v1/clinic/threads/${threadId}/messages`,
      { text: "Что я писал?" },
      widget(),
    );
    expect(write.status).toBe(404);
    expect(write.json).toEqual(missingBody);

    const follow = await fetch(`${server.url}/v1/clinic/threads/${threadId}/events`, {
      headers: { ...widget(), accept: "text/event-stream" },
    });
    expect(follow.status).toBe(404);
    await follow.body?.cancel();

    // An EventSource: both secrets in the URL, the guessed credential wrong — the stream says "nothing here".
    const es = await fetch(
      `${server.url}/v1/runs/${runId}/events?access_token=tok-widget&conversation_token=cc_guess`,
      { headers: { accept: "text/event-stream" } },
    );
    expect(es.status).toBe(204);
    const stages = await fetch(`${server.url}/v1/runs/${runId}/stages`, { headers: widget() });
    expect(stages.status).toBe(404);

    expect(await rows()).toBe(before);

    // Patient A, with the credential, is served as before: the thread, the run's replay.
    const own = await fetch(`${server.url}/v1/clinic/threads/${threadId}`, { headers: widget(conversationToken) });
    expect(own.status).toBe(200);
    expect(JSON.stringify(await own.json())).toContain("Анна");
    const replay = await fetch(
      `${server.url}/v1/runs/${runId}/events?access_token=tok-widget&conversation_token=${encodeURIComponent(conversationToken)}`,
      { headers: { accept: "text/event-stream" } },
    );
    expect(replay.status).toBe(200);
    expect(await replay.text()).toContain("Приём с 9 до 18");
  });
});
