import { spawn, type ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import { listenRunEvents } from "../../storage/runs";
import { onServer } from "../utils/db";
import { useTestServer } from "../utils/server";
import { readSse, type SseEvent } from "../utils/sse";
import { registerTestRoutes } from "../utils/test-routes";

// Two gateways on one database, each with its own in-memory hub: like two processes.
const one = useTestServer({ llm: true, extend: registerTestRoutes });
const two = useTestServer({ over: one, llm: true, extend: registerTestRoutes });
const llm = one.llm;

async function startSlowRun(base: string, tokensBeforeStop: number) {
  const conv = (await (await fetch(`${base}/v1/test/conversations`, { method: "POST" })).json()) as {
    conversationId: string;
  };
  llm.script("answer", {
    content: "раз два три четыре пять шесть семь восемь девять десять ".repeat(4),
    chunkDelayMs: 25,
  });
  const res = await fetch(`${base}/v1/test/conversations/${conv.conversationId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "считай" }),
  });
  const seen = await readSse(res, {
    stopAfter: (_e, all) => all.filter((x) => x.event === "token").length >= tokensBeforeStop,
  });
  return {
    seen: seen.events,
    runId: (seen.events[0]!.data as { runId: string }).runId,
    conversationId: conv.conversationId,
  };
}

async function follow(base: string, runId: string, lastEventId: number) {
  const res = await fetch(`${base}/v1/runs/${runId}/events`, { headers: { "last-event-id": String(lastEventId) } });
  return (await readSse(res)).events;
}

function checkContinuation(seen: SseEvent[], rest: SseEvent[]) {
  const last = Number(seen.at(-1)!.id);
  expect(rest.map((e) => Number(e.id))).toEqual(rest.map((_, i) => last + 1 + i));
  expect(rest.at(-1)!.event).toBe("done");
}

describe("GET /v1/runs/{runId}/events", () => {
  it("replays a finished run after Last-Event-ID", async () => {
    const { seen, runId } = await startSlowRun(one.url, 1000);
    const all = await follow(one.url, runId, 0);
    expect(all.map((e) => e.event)).toEqual(seen.map((e) => e.event));
    const tail = await follow(one.url, runId, 3);
    expect(tail.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
  });

  it("another gateway on the same database replays exactly the missing events, then follows the live run", async () => {
    const { seen, runId } = await startSlowRun(one.url, 4);
    const rest = await follow(two.url, runId, Number(seen.at(-1)!.id));
    checkContinuation(seen, rest);
    const text = [...seen, ...rest]
      .filter((e) => e.event === "token")
      .map((e) => (e.data as { delta: string }).delta)
      .join("");
    const final = rest.find((e) => e.event === "final")!.data as { answer: string };
    // Nothing lost, nothing twice: the tokens add up to the stored answer.
    expect(text).toBe(final.answer);
  });

  it("the serving process's own hub follows a live run too", async () => {
    const { seen, runId } = await startSlowRun(one.url, 2);
    checkContinuation(seen, await follow(one.url, runId, Number(seen.at(-1)!.id)));
  });

  it("rejects a malformed Last-Event-ID and an unknown run", async () => {
    expect((await fetch(`${one.url}/v1/runs/nope/events`)).status).toBe(404);
    const { runId } = await startSlowRun(one.url, 1000);
    const bad = await fetch(`${one.url}/v1/runs/${runId}/events`, { headers: { "last-event-id": "abc" } });
    expect(bad.status).toBe(400);
  });

  it.runIf(onServer)(
    "a follower on another process is woken by NOTIFY; a run nobody follows remotely announces nothing",
    async () => {
      const heard: string[] = [];
      const unlisten = await listenRunEvents(one.db.sql, (id) => heard.push(id));
      try {
        // Followed from the same process (its hub): no announcements.
        const local = await startSlowRun(one.url, 2);
        checkContinuation(local.seen, await follow(one.url, local.runId, Number(local.seen.at(-1)!.id)));
        // Followed from the other gateway: the owner announces what it stores, and the commit.
        const before = two.deps.waker.notifications;
        const { seen, runId } = await startSlowRun(one.url, 3);
        const rest = await follow(two.url, runId, Number(seen.at(-1)!.id));
        checkContinuation(seen, rest);
        expect(two.deps.waker.notifications).toBeGreaterThan(before);
        expect(heard).toContain(runId);
        expect(heard).not.toContain(local.runId);
      } finally {
        await unlisten();
      }
    },
  );

  it.runIf(onServer)("a separate server process (tsx main.ts) replays the missing events of a live run", async () => {
    const port = 31000 + Math.floor(Math.random() * 2000);
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "main.ts"], {
      env: {
        ...process.env,
        DATABASE_URL: one.dbUrl!,
        PORT: String(port),
        HOST: "127.0.0.1",
        API_TOKENS: "",
        OPENAI_BASE_URL: "",
        OPENAI_API_KEY: "",
      },
      stdio: "ignore",
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 100; i++) {
        if (
          await fetch(`${base}/healthz`).then(
            (r) => r.ok,
            () => false,
          )
        )
          break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const { seen, runId } = await startSlowRun(one.url, 3);
      checkContinuation(seen, await follow(base, runId, Number(seen.at(-1)!.id)));
    } finally {
      child.kill("SIGKILL");
    }
  });
});
