import { describe, expect, it } from "vitest";
import { SqlCounter } from "../../bench/sql-count";
import { RunHub } from "../../driver/hub";
import { Run } from "../../driver/run";
import { runTurn } from "../../driver/turn";
import { createConversation } from "../../storage/conversations";
import { openDatabase, type Database, type Tx } from "../../storage/db";
import type { Fragment } from "postgres";
import { appendMessages, listMessages, messagesInsert } from "../../storage/messages";
import { listMachineEvents } from "../../storage/machine-events";
import { loadSnapshot } from "../../storage/snapshots";
import { failAbandonedRuns, getRun, listRunEvents } from "../../storage/runs";
import { counterSpec } from "../utils/counter-machine";
import { onServer } from "../utils/db";
import { useTestServer } from "../utils/server";
import { postSse } from "../utils/sse";
import { registerTestRoutes } from "../utils/test-routes";
import { fixedUuid } from "../utils/ids";

/** The process that owns the test's runs (a UUID, as a server's instance id). */
const OWNER = fixedUuid(0xaa);

const server = useTestServer({ llm: true, extend: registerTestRoutes });
const llm = server.llm;

const start = async (db: Database, hub = new RunHub()) => {
  const conv = await createConversation(db.sql, "tenant-a", "test");
  const run = await Run.start({
    sql: db.sql,
    hub,
    conversationId: conv.id,
    tenantId: "tenant-a",
    kind: "test",
    owner: OWNER,
    debug: false,
    asyncCommits: db.backend === "postgres",
  });
  return { conv, run };
};

/**
 * One counter-machine turn of a started run, answered "ответ", with the caller's writes: a
 * transactional `commit`, or statement `writes` (with `stored` and `log` as a turn takes them).
 */
const counterTurn = (
  run: Run,
  conversationId: string,
  text: string,
  how: {
    commit?: (tx: Tx) => Promise<void>;
    writes?: (snapshot: unknown, when: Fragment) => (Fragment | null)[];
    stored?: null;
    log?: { settings?: string };
  },
) =>
  runTurn({
    sql: server.db.sql,
    run,
    spec: counterSpec,
    key: conversationId,
    conversationId,
    events: [{ type: "user.message", text }],
    effects: { "effect.model": () => ({ type: "model.replied" as const, text: "ответ" }) },
    closing: () => [{ event: "final", data: { answer: "ответ" } }],
    ...how,
  });

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  const late = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms (deadlock?)`)), ms),
  );
  return Promise.race([p, late]);
}

describe("Run", () => {
  it("a turn is one durable commit: on the server the run row at start commits asynchronously", async () => {
    const conv = (await (await fetch(`${server.url}/v1/test/conversations`, { method: "POST" })).json()) as {
      conversationId: string;
    };
    llm.script("answer", "один коммит");
    const counter = new SqlCounter();
    counter.attach(server.db.sql);
    const r = await postSse(`${server.url}/v1/test/conversations/${conv.conversationId}/messages`, {
      text: "сколько коммитов?",
    });
    counter.detach(server.db.sql);
    expect(r.events.at(-2)!.event).toBe("final");
    const c = counter.snapshot();
    // The run row, then the turn (and, on a slow machine, a background flush of the run's
    // events): on the server only the turn's own commit waits for its WAL flush. PGlite has
    // no WAL writer to finish an asynchronous commit, so there every commit is synchronous
    // (a write() without fsync — see storage/runs.ts).
    expect(c.writingCommits).toBeGreaterThanOrEqual(2);
    expect(c.writingCommits - c.asyncCommits).toBe(onServer ? 1 : c.writingCommits);
    expect(c.rollbacks).toBe(0);
    // …and the run row is there for a resuming client on any connection, completed by the turn.
    const runId = (r.events[0]!.data as { runId: string }).runId;
    expect(await getRun(server.db.sql, runId)).toMatchObject({ status: "completed" });
  });

  it("completing while a background flush waits for a connection does not deadlock (pool of one)", async () => {
    // A pool of one connection, as PGlite always has: the turn's transaction holds it.
    const db = server.dbUrl ? await openDatabase({ url: server.dbUrl, max: 1, migrate: false }) : server.db;
    try {
      const { run } = await start(db);
      run.emit("run_started", { runId: run.id });
      for (let i = 0; i < 5; i++) run.emit("token", { delta: `t${i} ` });
      // The background flush is issued, then the turn's transaction starts before it is done.
      void (run as unknown as { flush(): Promise<void> }).flush();
      const publish = await withTimeout(
        db.sql.begin((tx) => run.complete(tx, [{ event: "final", data: { ok: true } }])),
        10_000,
        "complete",
      );
      publish();
      const events = await listRunEvents(db.sql, run.id, 0);
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(events.map((e) => e.event).slice(-2)).toEqual(["final", "done"]);
    } finally {
      if (db !== server.db) await db.close();
    }
  });

  it("a turn whose transaction rolls back leaves no gap in the event ids: error follows the last event sent", async () => {
    const { conv, run } = await start(server.db);
    run.emit("run_started", { runId: run.id });
    run.emit("token", { delta: "привет" });
    await expect(
      counterTurn(run, conv.id, "привет", {
        commit: async (tx) => {
          await appendMessages(tx, conv.id, [{ role: "user", text: "привет" }]);
          throw new Error("disk full");
        },
      }),
    ).rejects.toThrow("disk full");
    await run.fail("internal", "не сохранилось");
    const events = await listRunEvents(server.db.sql, run.id, 0);
    expect(events.map((e) => [e.seq, e.event])).toEqual([
      [1, "run_started"],
      [2, "token"],
      [3, "error"],
      [4, "done"],
    ]);
    expect(await getRun(server.db.sql, run.id)).toMatchObject({ status: "failed" });
    const [n] = await server.db.sql<
      { n: number }[]
    >`select count(*)::int as n from messages where conversation_id = ${conv.id}`;
    expect(n!.n).toBe(0);
  });

  it("a run that crash recovery already failed cannot commit its turn (the process was taken for dead)", async () => {
    const { conv, run } = await start(server.db);
    run.emit("run_started", { runId: run.id });
    // Another process saw no heartbeat for too long and closed the run as abandoned.
    await new Promise((r) => setTimeout(r, 20));
    expect(await failAbandonedRuns(server.db.sql, { staleAfterMs: 10, ownerIs: OWNER })).toContain(run.id);
    await expect(
      counterTurn(run, conv.id, "поздно", {
        commit: async (tx) => void (await appendMessages(tx, conv.id, [{ role: "user", text: "поздно" }])),
      }),
    ).rejects.toMatchObject({ code: "conflict", details: { reason: "run_closed" } });
    // Nothing of the turn is stored: the conversation is as recovery reported it.
    expect(await loadSnapshot(server.db.sql, conv.id)).toBeNull();
    expect(await listMessages(server.db.sql, conv.id)).toEqual([]);
    expect(await getRun(server.db.sql, run.id)).toMatchObject({ status: "failed", errorCode: "internal" });
  });

  it("a turn without transactional writes commits in ONE statement; a run already failed by recovery writes nothing", async () => {
    const writes = (conversationId: string, text: string) => (_: unknown, when: Fragment) =>
      messagesInsert(server.db.sql, conversationId, [{ role: "user", text }], null, { when });
    const turn = (run: Run, conversationId: string, text: string, log?: { settings?: string }) =>
      // A first turn, known to have no snapshot yet: the turn reads nothing.
      counterTurn(run, conversationId, text, { stored: null, writes: writes(conversationId, text), log });
    const ok = await start(server.db);
    ok.run.emit("run_started", { runId: ok.run.id });
    // Stored now, so no background flush has anything to send while the turn is counted.
    await ok.run.flush();
    const counter = new SqlCounter();
    counter.attach(server.db.sql);
    try {
      await turn(ok.run, ok.conv.id, "привет", {});
    } finally {
      counter.detach(server.db.sql);
    }
    // No BEGIN/COMMIT: the snapshot, the log, the message, the run's events and its close are one statement.
    expect(counter.snapshot()).toMatchObject({ statements: 1, transactions: 1, writingCommits: 1 });
    expect((await loadSnapshot(server.db.sql, ok.conv.id))!.rowVersion).toBe(1);
    expect((await listMessages(server.db.sql, ok.conv.id)).map((m) => m.text)).toEqual(["привет"]);
    expect((await listMachineEvents(server.db.sql, ok.conv.id, ok.conv.id)).length).toBeGreaterThan(1);
    expect((await listRunEvents(server.db.sql, ok.run.id, 0)).map((e) => e.event)).toEqual([
      "run_started",
      "final",
      "done",
    ]);
    expect(await getRun(server.db.sql, ok.run.id)).toMatchObject({ status: "completed" });

    const late = await start(server.db);
    late.run.emit("run_started", { runId: late.run.id });
    await new Promise((r) => setTimeout(r, 20));
    expect(await failAbandonedRuns(server.db.sql, { staleAfterMs: 10, ownerIs: OWNER })).toContain(late.run.id);
    await expect(turn(late.run, late.conv.id, "поздно", {})).rejects.toMatchObject({
      code: "conflict",
      details: { reason: "run_closed" },
    });
    expect(await loadSnapshot(server.db.sql, late.conv.id)).toBeNull();
    expect(await listMessages(server.db.sql, late.conv.id)).toEqual([]);
    expect(await listMachineEvents(server.db.sql, late.conv.id, late.conv.id)).toEqual([]);
    expect(await getRun(server.db.sql, late.run.id)).toMatchObject({ status: "failed", errorCode: "internal" });
  });

  /** A turn committed in one statement (`writes`) or in a transaction with the caller's `commit`. */
  const lateTurn = (run: Run, conversationId: string, inTransaction: boolean) =>
    inTransaction
      ? counterTurn(run, conversationId, "поздно", {
          commit: async (tx) => {
            await appendMessages(tx, conversationId, [{ role: "user", text: "поздно" }]);
          },
        })
      : counterTurn(run, conversationId, "поздно", {
          writes: (_, when) =>
            messagesInsert(server.db.sql, conversationId, [{ role: "user", text: "поздно" }], null, { when }),
        });

  for (const inTransaction of [false, true])
    it.runIf(onServer)(
      `crash recovery closing the run while the turn's commit waits for its row: nothing is written (${inTransaction ? "in a transaction" : "one statement"})`,
      async () => {
        const { conv, run } = await start(server.db);
        run.emit("run_started", { runId: run.id });
        await run.flush();
        await new Promise((r) => setTimeout(r, 20));
        // Recovery has closed the run but not committed yet: the commit statement reads the run as
        // running, writes the snapshot and the message, then waits for the run's row.
        let recoveryMayCommit!: () => void;
        const gate = new Promise<void>((r) => (recoveryMayCommit = r));
        let closed!: (ids: string[]) => void;
        const recoveryClosed = new Promise<string[]>((r) => (closed = r));
        const recovery = server.db.sql.begin(async (tx) => {
          closed(await failAbandonedRuns(tx, { staleAfterMs: 10, ownerIs: OWNER }));
          await gate;
        });
        expect(await recoveryClosed).toContain(run.id);
        const turn = lateTurn(run, conv.id, inTransaction);
        turn.catch(() => {});
        let waited = false;
        for (let i = 0; i < 1000 && !waited; i++) {
          const [w] = await server.db.sql<{ n: number }[]>`
            select count(*)::int as n from pg_locks l join pg_stat_activity a using (pid)
            where not l.granted and a.datname = current_database()`;
          waited = w!.n > 0;
          if (!waited) await new Promise((r) => setTimeout(r, 10));
        }
        expect(waited).toBe(true);
        recoveryMayCommit();
        await recovery;
        await expect(turn).rejects.toMatchObject({ code: "conflict", details: { reason: "run_closed" } });
        expect(await loadSnapshot(server.db.sql, conv.id)).toBeNull();
        expect(await listMessages(server.db.sql, conv.id)).toEqual([]);
        expect(await getRun(server.db.sql, run.id)).toMatchObject({ status: "failed", errorCode: "internal" });
        expect((await listRunEvents(server.db.sql, run.id, 0)).map((e) => e.event)).toEqual([
          "run_started",
          "error",
          "done",
        ]);
      },
    );

  it("nothing can be emitted between complete() and its commit", async () => {
    const { run } = await start(server.db);
    run.emit("run_started", { runId: run.id });
    await expect(
      server.db.sql.begin(async (tx) => {
        await run.complete(tx, []);
        run.emit("token", { delta: "поздно" });
      }),
    ).rejects.toThrow(/being completed/);
    await run.fail("internal", "x");
    expect((await listRunEvents(server.db.sql, run.id, 0)).map((e) => e.event)).toEqual([
      "run_started",
      "error",
      "done",
    ]);
  });
});
