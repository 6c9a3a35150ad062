import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCK_FILE } from "../../storage/data-dir-lock";
import { onServer } from "../utils/db";
import { startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";
import { postSse } from "../utils/sse";
import { freePort, modelEnv, startServerProcess, type ServerProcess, type Storage } from "./processes";

/**
 * Two `npm start` on one embedded DATA_DIR (issue 18 item 2): the second refuses to start with a
 * clear message and a non-zero exit, the first goes on serving, and after the first is killed
 * with -9 (its lock left behind, its pid dead) a new process takes the folder over. The embedded
 * backend only: on a PostgreSQL server, many processes sharing a database is the design.
 */
let llm: ScriptedLlm;
let storage: Storage;
const running: ServerProcess[] = [];

beforeAll(async () => {
  llm = await startScriptedLlm();
  const dataDir = mkdtempSync(join(tmpdir(), "reliability-lock-"));
  storage = {
    env: { DATA_DIR: dataDir },
    dataDir,
    drop: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
});
afterAll(async () => {
  for (const p of running) await p.kill();
  await llm?.close();
  await storage?.drop();
});

/** `main.ts` as `npm start` runs it, to its exit. */
async function runToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const full: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    API_TOKENS: "",
    ...env,
  };
  delete full.DATABASE_URL;
  const child = spawn(process.execPath, ["--import", "tsx", "main.ts"], {
    cwd: process.cwd(),
    env: full,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
  clearTimeout(timer);
  return { code, output };
}

async function turnWorks(url: string) {
  const id = ((await (await fetch(`${url}/v1/clinic/threads`, { method: "POST" })).json()) as { threadId: string })
    .threadId;
  llm.script("router", "general_info");
  llm.script("branch", "Здравствуйте!");
  const r = await postSse(`${url}/v1/clinic/threads/${id}/messages`, { text: "Добрый день" });
  expect(r.events.find((e) => e.event === "final")?.data).toMatchObject({ reply: "Здравствуйте!" });
}

// On the PostgreSQL run of the suite this would test the same embedded folder again.
describe.skipIf(onServer)("one server process per embedded DATA_DIR", () => {
  it("a second process on the same folder refuses to start; the first keeps serving; kill -9 leaves a lock the next process takes over", async () => {
    const first = await startServerProcess(storage, modelEnv(llm));
    running.push(first);
    const lockPath = join(storage.dataDir, LOCK_FILE);
    expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: first.child.pid });

    const second = await runToExit({ ...storage.env, ...modelEnv(llm) });
    expect(second.code).not.toBe(0);
    expect(second.output).toContain(`could not start: DATA_DIR`);
    expect(second.output).toContain(`in use by another server process (pid ${first.child.pid})`);
    // The refusal touched nothing: the lock is still the first's, and the first still serves.
    expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: first.child.pid });
    await turnWorks(first.url);

    await first.kill();
    expect(existsSync(lockPath)).toBe(true);
    const third = await startServerProcess(storage, modelEnv(llm));
    running.push(third);
    expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: third.child.pid });
    await turnWorks(third.url);

    // A graceful stop gives the folder back.
    await third.stop();
    expect(existsSync(lockPath)).toBe(false);
  }, 240_000);

  // Issue 35: a container restarted after kill -9 is pid 1 again in a new pid namespace; its old
  // lock names pid 1 of the old one. The new server waits out the old holder's lease and serves.
  const UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"];
  const canUnshare = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"]).status === 0;
  it.skipIf(!canUnshare)(
    "kill -9 of a server that is pid 1 in its own pid namespace: restarted in a fresh one it serves, losing no acknowledged turn; a live one is still refused",
    async () => {
      const lockPath = join(storage.dataDir, LOCK_FILE);
      const first = await startServerProcess(storage, modelEnv(llm), 90_000, UNSHARE);
      running.push(first);
      expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: 1 });
      // an acknowledged turn
      const id = (
        (await (await fetch(`${first.url}/v1/clinic/threads`, { method: "POST" })).json()) as { threadId: string }
      ).threadId;
      llm.script("router", "general_info");
      llm.script("branch", "Здравствуйте!");
      const r = await postSse(`${first.url}/v1/clinic/threads/${id}/messages`, { text: "Добрый день" });
      expect(r.events.some((e) => e.event === "final")).toBe(true);

      await first.kill(); // SIGKILL to unshare; --kill-child takes pid 1 of the namespace with it
      expect(existsSync(lockPath)).toBe(true);
      const t0 = Date.now();
      const second = await startServerProcess(storage, modelEnv(llm), 90_000, UNSHARE);
      running.push(second);
      const restartMs = Date.now() - t0;
      const lock = JSON.parse(readFileSync(lockPath, "utf8")) as { pid: number; pidNs: string };
      expect(lock.pid).toBe(1); // pid 1 again, of another namespace
      const thread = (await (await fetch(`${second.url}/v1/clinic/threads/${id}`)).json()) as {
        messages: { role: string; text: string }[];
      };
      expect(thread.messages.map((m) => m.text)).toEqual(["Добрый день", "Здравствуйте!"]);
      console.log(`restart in a fresh pid namespace served after ${restartMs} ms`);

      // A live holder in another namespace renews its lease: a second server is refused.
      const third = await runToExit({ ...storage.env, ...modelEnv(llm) });
      expect(third.code).not.toBe(0);
      expect(third.output).toContain("in use by another server process (pid 1)");
      await turnWorks(second.url);
      // (unshare does not pass SIGTERM on to the namespace's pid 1: a graceful stop is tested above)
      await second.kill();
    },
    240_000,
  );
});
