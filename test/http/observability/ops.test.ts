import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStorage, startServerProcess, type Storage } from "../../reliability/processes";
import { clinicApi, stepTail } from "../../utils/clinic-api";
import { useTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";

/** Issue 34 part 4: readiness during the drain, request ids on streams, metric names, busy port, start-up line. */

const t = useTestServer({ llm: true, serve: false });
const llm = t.llm;
const A = { authorization: "Bearer tok", "content-type": "application/json" };
const tail = stepTail("answered");

const thread = (url: string) => clinicApi(url, "tok").newThread();

describe("server operations", () => {
  it("keeps listening while draining: /readyz 503, /healthz 200, new /v1 requests a structured 503", async () => {
    const s = await t.start({ llm: true, tokens: "tok" });
    let stopped: Promise<void> | undefined;
    try {
      const id = await thread(s.url);
      llm.reset();
      llm.script("router", "general_info");
      llm.script("branch", { content: `Мы на Лесной, 5.${tail}`, delayMs: 1_500 });
      const turn = postSse(`${s.url}/v1/clinic/threads/${id}/messages`, { text: "Какой у вас адрес?" }, A);
      while (llm.count("branch") < 1) await new Promise((r) => setTimeout(r, 20));
      stopped = s.stop(5_000);
      await new Promise((r) => setTimeout(r, 50));
      const ready = await fetch(`${s.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: "stopping" });
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      const refused = await fetch(`${s.url}/v1/clinic/threads`, { method: "POST", headers: A, body: "{}" });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ error: { code: "unavailable" } });
      // The turn that was running finishes within the grace.
      const done = await turn;
      expect(eventsNamed(done, "done")).toHaveLength(1);
      expect(eventsNamed(done, "error")).toHaveLength(0);
    } finally {
      await (stopped ?? s.stop());
    }
  });

  it("echoes X-Request-Id on JSON and SSE responses, and makes one when none (or a bad one) is sent", async () => {
    const s = await t.start({ llm: true, tokens: "tok" });
    try {
      const id = await thread(s.url);
      llm.reset();
      llm.script("router", "general_info", "general_info");
      llm.script("branch", `Мы на Лесной, 5.${tail}`, `Мы на Лесной, 5.${tail}`);
      const given = await postSse(
        `${s.url}/v1/clinic/threads/${id}/messages`,
        { text: "Какой у вас адрес?" },
        { ...A, "x-request-id": "req-abc.123" },
      );
      expect(given.headers.get("content-type")).toContain("text/event-stream");
      expect(given.headers.get("x-request-id")).toBe("req-abc.123");
      const made = await postSse(`${s.url}/v1/clinic/threads/${id}/messages`, { text: "А телефон?" }, A);
      expect(made.headers.get("content-type")).toContain("text/event-stream");
      expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const bad = await fetch(`${s.url}/healthz`, { headers: { "x-request-id": "bad id with spaces" } });
      expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const json = await fetch(`${s.url}/v1/clinic/threads/${id}`, { headers: { ...A, "x-request-id": "r-2" } });
      expect(json.headers.get("x-request-id")).toBe("r-2");
      const err = await fetch(`${s.url}/v1/clinic/threads/${id}`, { headers: { "x-request-id": "r-3" } });
      expect(err.status).toBe(401);
      expect(err.headers.get("x-request-id")).toBe("r-3");
    } finally {
      await s.stop();
    }
  });

  it("names the process metrics ds_process_* and ds_nodejs_*, never ds_process_process_*", async () => {
    const s = await t.start({ tokens: "tok" });
    try {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      expect(text).toMatch(/^ds_process_cpu_user_seconds_total /m);
      expect(text).toMatch(/^ds_nodejs_heap_size_used_bytes /m);
      expect(text).not.toContain("ds_process_process_");
      expect(text).not.toContain("ds_process_nodejs_");
    } finally {
      await s.stop();
    }
  });
});

describe("`node main.ts` start-up", () => {
  let storage: Storage;
  beforeAll(async () => {
    storage = await createStorage();
  });
  afterAll(async () => {
    await storage?.drop();
  });

  it(
    "lists the pages and the API document, and a busy port exits 1 with a one-line hint",
    { timeout: 120_000 },
    async () => {
      const first = await startServerProcess(storage, {});
      try {
        const out = first.output();
        for (const path of ["/inbox.html", "/sandbox.html", "/settings.html", "/workbench.html", "/openapi.json"])
          expect(out).toContain(`${first.url}${path}`);
        const port = new URL(first.url).port;
        const env: Record<string, string> = {
          ...(process.env as Record<string, string>),
          PORT: port,
          HOST: "127.0.0.1",
          API_TOKENS: "",
          DATA_DIR: "memory://",
        };
        delete env.DATABASE_URL;
        const second = spawn(process.execPath, ["--import", "tsx", "main.ts"], {
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let err = "";
        second.stderr!.on("data", (d) => (err += d));
        const code = await new Promise<number | null>((r) => second.once("exit", (c) => r(c)));
        expect(code).toBe(1);
        expect(err).toContain(`could not start: port ${port} is already in use`);
        expect(err).toContain("PORT=");
        expect(err).not.toMatch(/^\s+at /m);
        expect(err).not.toContain("EADDRINUSE");
      } finally {
        await first.stop();
      }
    },
  );
});
