import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, onServer } from "../../utils/db";
import { startScriptedLlm, scriptedLlmConfig, type ScriptedLlm } from "../../utils/scripted-llm";
import { workspace } from "./fixtures";
import {
  askWhichDiscount,
  expectReplayMatches,
  interaction,
  newConversation,
  one,
  replyTo,
} from "./http-workbench-helpers";

// A real process restart between a clarification and its answer: the first server process is
// stopped, a second one starts over the same database and takes the answer.
let llm: ScriptedLlm;
let db: Awaited<ReturnType<typeof createTestDatabase>> | null = null;
const dataDir = mkdtempSync(join(tmpdir(), "wb-restart-"));
const port = 21000 + Math.floor(Math.random() * 20000);
const base = `http://127.0.0.1:${port}`;

beforeAll(async () => {
  llm = await startScriptedLlm();
  // On the PostgreSQL server both processes use a fresh test database; else a file-backed PGlite.
  if (onServer) {
    db = await createTestDatabase();
    await db.db.close();
  }
}, 60_000);
afterAll(async () => {
  await llm?.close();
  if (db) await db.drop().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

function startProcess(): Promise<ChildProcess> {
  const cfg = scriptedLlmConfig(llm);
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    OPENAI_BASE_URL: cfg.baseURL,
    OPENAI_API_KEY: "test-key",
    LLM_MODEL: "test-answer",
    RUN_DETACH_GRACE_MS: "0",
  };
  for (const r of ["planner", "reranker", "classifier", "answer"]) env[`LLM_MODEL_${r.toUpperCase()}`] = `test-${r}`;
  if (db?.url) env.DATABASE_URL = db.url;
  else delete env.DATABASE_URL;
  const child = spawn(process.execPath, ["--import", "tsx", "main.ts"], {
    cwd: process.cwd(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  return new Promise((resolve, reject) => {
    const until = Date.now() + 60_000;
    const poll = async () => {
      if (child.exitCode !== null) return reject(new Error(`server exited: ${log}`));
      try {
        if ((await fetch(`${base}/healthz`)).ok) return resolve(child);
      } catch {
        /* not yet */
      }
      if (Date.now() > until) {
        child.kill("SIGKILL");
        return reject(new Error(`server not healthy: ${log}`));
      }
      setTimeout(poll, 200);
    };
    void poll();
  });
}

function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

describe(`workbench: a restart between a clarification and its answer (${onServer ? "PostgreSQL server, kill -9" : "file-backed PGlite, SIGTERM"})`, () => {
  it("loses nothing: the answer continues the same Interaction after the restart", async () => {
    let child = await startProcess();
    const conv = await newConversation(base);
    const { q } = await askWhichDiscount(llm, base, conv, { workspace });
    expect(q.candidates).toHaveLength(2);
    // The embedded PGlite issues no fsync (see DESIGN), so it is stopped cleanly; the server is killed outright.
    await stopProcess(child, onServer ? "SIGKILL" : "SIGTERM");

    child = await startProcess();
    try {
      const before = await interaction(base, q.interactionId);
      expect(before).toMatchObject({
        status: "awaiting_clarification",
        planVersion: 1,
        clarifications: [{ id: q.id, status: "open" }],
      });
      llm.script("answer", "Выбрана архивная [[composition-discount-v1]].");
      const pick = q.candidates.find((c: { identity: string }) => c.identity === "composition-discount-v1");
      const r2 = await replyTo(base, conv, q, "архивную", workspace, {
        interactionId: q.interactionId,
        selectedCandidateId: pick.candidateId,
      });
      expect(one(r2, "final")).toMatchObject({
        status: "completed",
        entityCitations: ["composition-discount-v1"],
        validation: { ok: true },
      });
      const after = await interaction(base, q.interactionId);
      expect(after).toMatchObject({ status: "completed", planVersion: 2, clarifications: [{ status: "answered" }] });
    } finally {
      await stopProcess(child, "SIGTERM");
    }
    if (db?.url) {
      const { openDatabase } = await import("../../../storage/db");
      const check = await openDatabase({ url: db.url, migrate: false });
      try {
        await expectReplayMatches(check.sql, `interaction:${q.interactionId}`);
      } finally {
        await check.close();
      }
    }
  }, 150_000);
});
