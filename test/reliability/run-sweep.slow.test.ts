import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { listRunEvents, MAX_RUN_EVENTS } from "../../storage/runs";
import { onServer } from "../utils/db";
import { type ScriptedLlm } from "../utils/scripted-llm";
import { modelEnv, startServerProcess, useProcesses } from "./processes";
import { openSse, tokens } from "./sse-live";
import { clinicApi } from "../utils/clinic-api";

/**
 * The periodic sweep of abandoned runs (http/start.ts startRunSweep). Two processes on one
 * PostgreSQL database: one is killed (-9) mid-turn; the other, with nobody resuming the run,
 * closes it as failed with a stored `error` + `done` within RUN_STALE_MS + RUN_SWEEP_MS. On
 * both backends: a live turn that lasts several stale windows is never swept (the heartbeat).
 */
const STALE_MS = 1_500;
const SWEEP_MS = 300;
const env = (model: ScriptedLlm) => modelEnv(model, { RUN_STALE_MS: String(STALE_MS), RUN_SWEEP_MS: String(SWEEP_MS) });
const backend = onServer ? "PostgreSQL server" : "file-backed PGlite";

const fx = useProcesses();
const servers = fx.servers;

const newThread = (base: string) => clinicApi(base).newThread();

describe.runIf(onServer)("sweep of abandoned runs: two processes on one PostgreSQL database", () => {
  it("kill -9 of one mid-turn: the other marks the run failed with error + done, nobody resuming", async () => {
    const [a, b] = await Promise.all([
      startServerProcess(fx.storage, env(fx.llm)),
      startServerProcess(fx.storage, env(fx.llm)),
    ]);
    servers.push(a, b);
    const sql = postgres(fx.storage.url!, { max: 1, onnotice: () => {} });
    try {
      const id = await newThread(a.url);
      fx.llm.script("router", "general_info");
      fx.llm.script("branch", {
        content: "Длинный ответ, который не успеет дописаться. ".repeat(40),
        chunkDelayMs: 40,
      });
      const turn = await openSse(`${a.url}/v1/clinic/threads/${id}/messages`, { text: "Расскажите подробно" });
      await turn.waitFor((all) => tokens(all) >= 3);
      const runId = (turn.events[0]!.data as { runId: string }).runId;
      await a.kill();
      const killedAt = Date.now();
      await turn.ended;

      // Polled from outside: nobody follows the run, so only b's sweep can close it.
      type Row = { status: string; error_code: string | null; outcome: string | null };
      let row: Row | undefined;
      for (;;) {
        [row] = await sql<Row[]>`select status, error_code, outcome from runs where id = ${runId}`;
        if (row?.status !== "running" || Date.now() - killedAt > 30_000) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const closedAfterMs = Date.now() - killedAt;
      expect(row).toMatchObject({ status: "failed", error_code: "internal", outcome: "abandoned" });
      // The heartbeat was at most STALE_MS/3 old at the kill; then at most one sweep interval, plus slack for a loaded machine.
      expect(closedAfterMs).toBeLessThan(STALE_MS + SWEEP_MS + 2_000);
      expect(closedAfterMs).toBeGreaterThan(STALE_MS / 2);
      const events = await listRunEvents(sql, runId, 0);
      expect(events.slice(-2).map((e) => [e.event, e.seq])).toEqual([
        ["error", MAX_RUN_EVENTS + 1],
        ["done", MAX_RUN_EVENTS + 2],
      ]);
      // The log line travels through a pipe after the row changed: given a moment to arrive.
      for (let i = 0; i < 40 && !b.output().includes(runId); i++) await new Promise((r) => setTimeout(r, 50));
      expect(b.output()).toContain("sweep: closed 1 run(s)");
      expect(b.output()).toContain(runId);
      console.log(
        `sweep closed the killed run ${closedAfterMs} ms after kill -9 (stale ${STALE_MS}, sweep ${SWEEP_MS})`,
      );

      // The conversation is usable again at once on b: no 409 conversation_busy for the dead run.
      fx.llm.reset();
      fx.llm.script("router", "general_info");
      fx.llm.script("branch", "Готово.");
      const next = await openSse(`${b.url}/v1/clinic/threads/${id}/messages`, { text: "Ещё раз" });
      expect(next.status).toBe(200);
      await next.waitFor((all) => all.some((e) => e.event === "done"));
      expect(next.events.some((e) => e.event === "final")).toBe(true);
    } finally {
      await sql.end({ timeout: 2 });
    }
  }, 120_000);
});

describe(`sweep of abandoned runs never closes a live one (${backend})`, () => {
  it("a turn silent for several stale windows (model slow to start) completes; its run is not swept", async () => {
    const s = await startServerProcess(fx.storage, env(fx.llm));
    servers.push(s);
    const id = await newThread(s.url);
    fx.llm.reset();
    fx.llm.script("router", "general_info");
    // No event is stored for 3 stale windows: only the process heartbeat keeps the run alive.
    fx.llm.script("branch", { content: "Ответ после долгой паузы.", delayMs: STALE_MS * 3 });
    const turn = await openSse(`${s.url}/v1/clinic/threads/${id}/messages`, { text: "Подумайте" });
    await turn.waitFor((all) => all.some((e) => e.event === "done"), 30_000);
    expect(turn.events.map((e) => e.event)).toContain("final");
    expect(turn.events.some((e) => e.event === "error")).toBe(false);
    expect(s.output()).not.toContain("sweep: closed");
    await s.stop();
  }, 120_000);
});
