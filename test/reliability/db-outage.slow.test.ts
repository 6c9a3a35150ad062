import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { type ScriptedLlm } from "../utils/scripted-llm";
import { modelEnv, startServerProcess, useProcesses } from "./processes";
import { openSse, tokens, type LiveSse } from "./sse-live";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy";

/**
 * A database outage under running turns (issue 47), on the PostgreSQL server: a loopback TCP
 * proxy between the server process and PostgreSQL cuts every connection and refuses new ones
 * (the shared server itself is never stopped). Turns streaming when it goes end with `error`
 * (`storage_unavailable`) + `done` within the commit deadline, nothing of theirs stored; new
 * requests get 503 `storage_unavailable` with Retry-After; after it returns the server serves
 * again, every stranded run is closed by the sweep (this process's own too), each failed turn
 * is resent with its Idempotency-Key and answered, and its conversation can be erased.
 *
 * RELIABILITY_OUTAGE_MS sets the outage (default 6 s in CI; 40000 for the 40 s): the
 * deadlines are the same whatever its length.
 */
const OUTAGE_MS = Number(process.env.RELIABILITY_OUTAGE_MS ?? 6_000);
const COMMIT_MS = 2_000;
const CLOSE_MS = 1_000;
const STALE_MS = 1_500;
const SWEEP_MS = 300;
const TURNS = 4;
const env = (model: ScriptedLlm) =>
  modelEnv(model, {
    COMMIT_TIMEOUT_MS: String(COMMIT_MS),
    RUN_CLOSE_TIMEOUT_MS: String(CLOSE_MS),
    RUN_STALE_MS: String(STALE_MS),
    RUN_SWEEP_MS: String(SWEEP_MS),
    SWEEP_TIMEOUT_MS: "2000",
  });

let proxy: TcpProxy | undefined;
const fx = useProcesses(() => proxy?.close());
const servers = fx.servers;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(onServer)(`a ${OUTAGE_MS / 1000} s database outage (TCP proxy cuts PostgreSQL's connections)`, () => {
  it("turns end with storage_unavailable within the deadline, 503 meanwhile, then served, swept, resendable, erasable", async () => {
    const target = new URL(fx.storage.url!);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const server = await startServerProcess(
      { ...fx.storage, env: { ...fx.storage.env, DATABASE_URL: proxy.url(fx.storage.url!) } },
      env(fx.llm),
    );
    servers.push(server);
    const direct = postgres(fx.storage.url!, { max: 1, onnotice: () => {} });
    try {
      const threads: string[] = [];
      for (let i = 0; i < TURNS; i++) {
        const r = await fetch(`${server.url}/v1/clinic/threads`, { method: "POST" });
        expect(r.status).toBe(201);
        threads.push(((await r.json()) as { threadId: string }).threadId);
      }
      const reply = "Подробный ответ, который дописывается, пока база данных недоступна. ".repeat(3);
      for (let i = 0; i < TURNS; i++) {
        fx.llm.script("router", "general_info");
        fx.llm.script("branch", { content: reply, chunkDelayMs: 40 });
      }
      const keys = threads.map((_, i) => `outage-${i}-${Date.now()}`);
      const turns: LiveSse[] = await Promise.all(
        threads.map((t, i) =>
          openSse(
            `${server.url}/v1/clinic/threads/${t}/messages`,
            { text: "Расскажите подробно" },
            {
              "idempotency-key": keys[i]!,
            },
          ),
        ),
      );
      for (const t of turns) expect(t.status).toBe(200);
      await Promise.all(turns.map((t) => t.waitFor((all) => tokens(all) >= 2)));

      proxy.cut();
      const cutAt = Date.now();
      // Every turn ends, with the database away: its tokens, then error + done, no final.
      const endedAfter = await Promise.all(
        turns.map(async (t) => {
          await t.waitFor((all) => all.some((e) => e.event === "done"), 30_000);
          return Date.now() - cutAt;
        }),
      );
      for (const t of turns) {
        const names = t.events.map((e) => e.event);
        expect(names).not.toContain("final");
        expect(names.slice(-2)).toEqual(["error", "done"]);
        expect((t.events.at(-2)!.data as { code: string }).code).toBe("storage_unavailable");
      }
      // The rest of the reply streams (≤ ~1.5 s), then the commit's deadline and the close's; slack for a loaded machine.
      const bound = 1_500 + COMMIT_MS + CLOSE_MS + 3_000;
      expect(Math.max(...endedAfter)).toBeLessThan(bound);

      // Meanwhile: a structured 503 with Retry-After, not a hang or a 500; /readyz says so.
      const refused = await fetch(`${server.url}/v1/clinic/threads`, {
        method: "POST",
        signal: AbortSignal.timeout(COMMIT_MS + 8_000),
      });
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("storage_unavailable");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      const ready = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(15_000) });
      expect(ready.status).toBe(503);

      await sleep(Math.max(0, cutAt + OUTAGE_MS - Date.now()));
      proxy.restore();
      const restoredAt = Date.now();

      // Served again.
      let servedAfter = -1;
      while (Date.now() - restoredAt < 30_000) {
        const r = await fetch(`${server.url}/v1/clinic/threads`, { method: "POST" }).catch(() => null);
        if (r?.status === 201) {
          servedAfter = Date.now() - restoredAt;
          break;
        }
        await sleep(100);
      }
      expect(servedAfter).toBeGreaterThanOrEqual(0);
      // And ready again: a load balancer sends it traffic once more.
      await expect
        .poll(async () => (await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(5_000) })).status, {
          timeout: 15_000,
        })
        .toBe(200);

      // Every run stranded by the outage is closed by the sweep — this process's own included.
      let running = -1;
      while (Date.now() - restoredAt < STALE_MS + SWEEP_MS + 15_000) {
        [{ running }] = await direct<[{ running: number }]>`
          select count(*)::int as running from runs where conversation_id = any(${threads}::uuid[]) and status = 'running'`;
        if (running === 0) break;
        await sleep(100);
      }
      expect(running).toBe(0);
      const sweptAfter = Date.now() - restoredAt;
      // Nothing of the failed turns was stored.
      const [{ stored }] = await direct<[{ stored: number }]>`
        select count(*)::int as stored from messages where conversation_id = any(${threads}::uuid[])`;
      expect(stored).toBe(0);

      // Each failed turn, resent with its key, is answered; then its conversation can be erased.
      for (let i = 0; i < TURNS; i++) {
        fx.llm.script("router", "general_info");
        fx.llm.script("branch", "Ответ после восстановления.");
      }
      for (let i = 0; i < TURNS; i++) {
        const again = await openSse(
          `${server.url}/v1/clinic/threads/${threads[i]}/messages`,
          { text: "Расскажите подробно" },
          {
            "idempotency-key": keys[i]!,
          },
        );
        expect(again.status).toBe(200);
        await again.waitFor((all) => all.some((e) => e.event === "done"));
        expect(again.events.map((e) => e.event)).toContain("final");
      }
      const erased = await fetch(`${server.url}/v1/inbox/conversations/${threads[0]}`, { method: "DELETE" });
      expect(erased.status).toBe(204);
      console.log(
        `outage ${OUTAGE_MS} ms: ${TURNS} turns ended with storage_unavailable ${Math.min(...endedAfter)}–${Math.max(...endedAfter)} ms after the cut; ` +
          `served again ${servedAfter} ms after the database returned; stranded runs closed ${sweptAfter} ms after`,
      );
      expect(server.output()).not.toContain('"level":"error","event":"request_failed"');
    } catch (e) {
      console.log(server.output().slice(-6000));
      throw e;
    } finally {
      await direct.end({ timeout: 2 });
    }
  }, 180_000);
});
