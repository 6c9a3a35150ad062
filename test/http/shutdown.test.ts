import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { useProcesses, freePort, modelEnv, startServerProcess } from "../reliability/processes";
import { eventsNamed, postSse } from "../utils/sse";

/**
 * Issue 17 item 4 with a real process started as `npm start`: SIGTERM to npm reaches the server;
 * a turn that ends within SHUTDOWN_GRACE_MS completes, one that does not gets `error` + `done`
 * and leaves nothing stored; new requests are refused; the process exits 0.
 */

const A = { authorization: "Bearer tok", "content-type": "application/json" };
const tail = `\nSTATE_JSON: ${JSON.stringify({ state_after: "answered", slots_updated: {} })}`;

const fx = useProcesses();
const llm = fx.llm;

describe("graceful shutdown of `npm start`", () => {
  it(
    "finishes the short turn, fails the long one with error + done, commits nothing half-done, exits 0",
    { timeout: 120_000 },
    async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        ...fx.storage.env,
        ...modelEnv(llm, { LLM_TIMEOUT_MS: "60000" }),
        PORT: String(port),
        HOST: "127.0.0.1",
        API_TOKENS: "tok",
        SHUTDOWN_GRACE_MS: "2500",
        RUN_DETACH_GRACE_MS: "0",
      };
      if (!fx.storage.env.DATABASE_URL) delete env.DATABASE_URL;
      const npm = spawn("npm", ["start", "--silent"], { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      npm.stdout!.on("data", (d) => (out += d));
      npm.stderr!.on("data", (d) => (out += d));
      let shortId: string | undefined;
      let longId: string | undefined;
      const exited = new Promise<number | null>((r) => npm.once("exit", (code) => r(code)));
      try {
        const until = Date.now() + 90_000;
        while (
          !(await fetch(`${url}/readyz`).then(
            (r) => r.ok,
            () => false,
          ))
        ) {
          if (Date.now() > until || npm.exitCode !== null) throw new Error(`not ready: ${out}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        const thread = async () =>
          (
            (await (await fetch(`${url}/v1/clinic/threads`, { method: "POST", headers: A, body: "{}" })).json()) as {
              threadId: string;
            }
          ).threadId;
        const short = (shortId = await thread());
        const long = (longId = await thread());
        llm.reset();
        // Router calls answer at once; the two branch calls are taken in order: 1 s, then 60 s.
        llm.script("router", "general_info", "general_info");
        llm.script(
          "branch",
          { content: `Мы на Лесной, 5.${tail}`, delayMs: 1_000 },
          { content: `Не успею.${tail}`, delayMs: 60_000 },
        );
        const shortTurn = postSse(`${url}/v1/clinic/threads/${short}/messages`, { text: "Какой у вас адрес?" }, A);
        while (llm.count("branch") < 1) await new Promise((r) => setTimeout(r, 20));
        const longTurn = postSse(`${url}/v1/clinic/threads/${long}/messages`, { text: "А часы работы?" }, A);
        while (llm.count("branch") < 2) await new Promise((r) => setTimeout(r, 20));

        const signalled = Date.now();
        npm.kill("SIGTERM");
        await new Promise((r) => setTimeout(r, 300));
        // Stopped accepting: a new request is refused (connection refused, or 503 on a kept-alive socket).
        const late = await fetch(`${url}/v1/clinic/threads`, { method: "POST", headers: A, body: "{}" }).then(
          (r) => r.status,
          () => "refused",
        );
        expect([503, "refused"]).toContain(late);

        const [s, l] = await Promise.all([shortTurn, longTurn]);
        expect(eventsNamed(s, "final")).toHaveLength(1);
        expect(s.events.at(-1)!.event).toBe("done");
        expect(eventsNamed(l, "final")).toHaveLength(0);
        expect(l.events.slice(-2).map((e) => e.event)).toEqual(["error", "done"]);
        expect(eventsNamed(l, "error")[0]).toMatchObject({
          code: "unavailable",
          message: expect.stringContaining("Сервер перезапускается"),
        });

        expect(await exited).toBe(0);
        const took = Date.now() - signalled;
        expect(took).toBeGreaterThanOrEqual(2_400); // waited for the grace period…
        expect(took).toBeLessThan(15_000); // …not for the 60-second model call
        expect(
          await fetch(`${url}/healthz`).then(
            () => "up",
            () => "down",
          ),
        ).toBe("down");
        const logs = out
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        expect(logs.find((l) => l.event === "shutdown")).toMatchObject({ signal: "SIGTERM", running: 2 });
        expect(logs.find((l) => l.event === "turn_failed")).toMatchObject({
          code: "unavailable",
          cause: "shutdown",
          conversationId: long,
        });
      } finally {
        if (npm.exitCode === null) npm.kill("SIGKILL");
      }

      const short = shortId!;
      const long = longId!;
      // Restarted on the same data: the short turn is stored, the long one left nothing.
      const again = await startServerProcess(fx.storage, { ...modelEnv(llm), API_TOKENS: "tok" });
      try {
        const get = async (id: string) =>
          (await (await fetch(`${again.url}/v1/clinic/threads/${id}`, { headers: A })).json()) as {
            messages: { role: string; text: string }[];
          };
        const threads = (await (await fetch(`${again.url}/v1/stats/outcomes?kind=clinic`, { headers: A })).json()) as {
          byKind: { completed: number; failed: number }[];
        };
        expect(threads.byKind[0]).toMatchObject({ completed: 1, failed: 1 });
        expect((await get(short)).messages.map((m) => m.role)).toEqual(["user", "assistant"]);
        expect((await get(long)).messages).toEqual([]);
      } finally {
        await again.stop();
      }
    },
  );
});
