import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { freePort } from "../../bench/procs";
import { openDatabase, type Sql } from "../../storage/db";
import { createTestDatabase, onServer } from "../utils/db";
import { afterAll, beforeAll } from "vitest";
import { lazyLlm, scriptedLlmConfig, startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";

/**
 * Real server processes (`node --import tsx main.ts`) for the reliability suite: the
 * same entry point `npm start` uses, over a file-backed PGlite folder or a scratch database on
 * the PostgreSQL server (chosen by DATABASE_URL, like every test), with every model role
 * pointed at a scripted model server in the test process.
 */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGKILL: no shutdown code runs, exactly like a crash. */
  kill(): Promise<void>;
  /** SIGTERM: the graceful stop. */
  stop(): Promise<void>;
}

export interface Storage {
  env: Record<string, string>;
  /** Server: the scratch database URL, readable while processes run. PGlite: undefined (one process at a time). */
  url?: string;
  dataDir: string;
  drop(): Promise<void>;
}

/**
 * Reads the processes' storage after the fact: directly on the server; on PGlite once no process
 * holds the folder (a stopped or killed one).
 */
export async function readStorage<T>(storage: Storage, read: (sql: Sql) => Promise<T>): Promise<T> {
  if (storage.url) {
    const sql = postgres(storage.url, { max: 1, onnotice: () => {} });
    try {
      return await read(sql);
    } finally {
      await sql.end({ timeout: 2 });
    }
  }
  const db = await openDatabase({ dataDir: storage.dataDir });
  try {
    return await read(db.sql);
  } finally {
    await db.close();
  }
}

/** Where the processes keep their data: a scratch server database, else a PGlite folder. */
export async function createStorage(): Promise<Storage> {
  const dataDir = mkdtempSync(join(tmpdir(), "reliability-"));
  if (onServer) {
    const t = await createTestDatabase();
    await t.db.close();
    return {
      env: { DATABASE_URL: t.url!, DATA_DIR: dataDir },
      url: t.url,
      dataDir,
      drop: async () => {
        await t.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  return { env: { DATA_DIR: dataDir }, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** The bench's free loopback port: one way to pick a port for a spawned server. */
export { freePort };

export function modelEnv(llm: ScriptedLlm, extra: Record<string, string> = {}): Record<string, string> {
  const cfg = scriptedLlmConfig(llm);
  const env: Record<string, string> = {
    OPENAI_BASE_URL: cfg.baseURL,
    OPENAI_API_KEY: "test-key",
    LLM_MODEL: "test-answer",
    LLM_TIMEOUT_MS: "5000",
    ...extra,
  };
  for (const role of ["router", "branch", "planner", "reranker", "classifier", "answer"])
    env[`LLM_MODEL_${role.toUpperCase()}`] = `test-${role}`;
  return env;
}

export async function startServerProcess(
  storage: Storage,
  env: Record<string, string>,
  timeoutMs = 90_000,
  /** A command the server runs under, e.g. `unshare --pid --fork --mount-proc --kill-child`. */
  prefix: string[] = [],
  /** `stdoutFd`: the server's stdout goes to this descriptor instead of a pipe the test reads (e.g. a FIFO nobody reads). */
  o: { stdoutFd?: number } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const full: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: "127.0.0.1",
    API_TOKENS: "",
    RUN_DETACH_GRACE_MS: "0",
    AI_DEBUG: "false",
    ...storage.env,
    ...env,
  };
  if (!storage.env.DATABASE_URL) delete full.DATABASE_URL;
  const argv = [process.execPath, "--import", "tsx", "main.ts"];
  const child = spawn(prefix[0] ?? argv[0]!, [...prefix.slice(1), ...(prefix.length ? argv : argv.slice(1))], {
    cwd: process.cwd(),
    env: full,
    stdio: ["ignore", o.stdoutFd ?? "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const proc: ServerProcess = {
    url,
    child,
    output: () => log,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${log}`);
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return proc;
    if (Date.now() > until) {
      await proc.kill();
      throw new Error(`server not healthy within ${timeoutMs} ms: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * The hooks of a file of real server processes: one scripted model and one storage for the file;
 * every process pushed to `servers` is killed at its end, then `also` runs (a proxy's close).
 * `llm` may be kept in a module-level const: it is the file's model once the hooks ran.
 */
export function useProcesses(also?: () => Promise<void> | undefined): {
  readonly llm: ScriptedLlm;
  readonly storage: Storage;
  readonly servers: ServerProcess[];
} {
  let llm: ScriptedLlm | undefined;
  let storage: Storage | undefined;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    llm = await startScriptedLlm();
    storage = await createStorage();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill()));
    await also?.();
    await llm?.close();
    await storage?.drop();
  });
  return {
    llm: lazyLlm(() => {
      if (!llm) throw new Error("scripted model not started (use inside tests)");
      return llm;
    }),
    get storage() {
      if (!storage) throw new Error("storage not created (use inside tests)");
      return storage;
    },
    servers,
  };
}

/**
 * `useProcesses` with `count` server processes started before the file's tests, every model role on
 * the file's scripted model and `env` on top. `server` is the latest one; `start()` starts another
 * with the same env (a restart after a kill, a second process).
 */
export function useServerProcesses(
  env: Record<string, string> = {},
  count = 1,
): ReturnType<typeof useProcesses> & { readonly server: ServerProcess; start(): Promise<ServerProcess> } {
  const fx = useProcesses();
  const start = async () => {
    const s = await startServerProcess(fx.storage, modelEnv(fx.llm, env));
    fx.servers.push(s);
    return s;
  };
  beforeAll(
    async () => {
      // One first: it applies the migrations (the others would wait on its advisory lock).
      await start();
      await Promise.all(Array.from({ length: count - 1 }, start));
    },
    120_000 + 60_000 * (count - 1),
  );
  return {
    llm: fx.llm,
    get storage() {
      return fx.storage;
    },
    servers: fx.servers,
    get server() {
      const s = fx.servers.at(-1);
      if (!s) throw new Error("no server process started (use inside tests)");
      return s;
    },
    start,
  };
}
