import { serve, type ServerType } from "@hono/node-server";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { loadConfig, type Config } from "../../http/config";
import type { Deps, HttpDialogueSystem } from "../../http/deps";
import { startServer, type StartOptions, type Started } from "../../http/start";
import { openDatabase, type Database } from "../../storage/db";
import { dialogueSystems } from "../../systems";
import { createTestDatabase } from "./db";
import { lazyLlm, scriptedLlmConfig, startScriptedLlm, type ScriptedLlm } from "./scripted-llm";

export interface TestServerOptions {
  /** The test file's database; omitted: the server opens its own from the config (DATABASE_URL in `env`). */
  db?: Database;
  /** Point every role at this scripted server; omitted → the offline provider. */
  llm?: ScriptedLlm;
  /** API_TOKENS spec, e.g. "a:tok-a,b:tok-b". */
  tokens?: string;
  env?: Record<string, string>;
  /** Dialogue systems to serve (default: systems/index.ts). */
  systems?: readonly HttpDialogueSystem[];
  extend?: StartOptions["extend"];
  /** The server's log (default: dropped). */
  log?: (line: string) => void;
  /** Edits the loaded config before the server starts (what no env variable sets, e.g. a role's model). */
  configure?: (config: Config) => void;
}

export type StartedTestServer = Started & { config: Config };

/** A real HTTP server on an ephemeral loopback port over the test file's database. */
export async function startTestServer(o: TestServerOptions): Promise<StartedTestServer> {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: "memory://",
    ...(o.tokens ? { API_TOKENS: o.tokens } : {}),
    ...o.env,
  });
  if (o.llm) config.llm = { ...config.llm, ...scriptedLlmConfig(o.llm, o.systems ?? dialogueSystems) };
  o.configure?.(config);
  const started = await startServer(config, o.log ?? (() => {}), {
    db: o.db,
    extend: o.extend,
    systems: o.systems ?? dialogueSystems,
  });
  let stopping: Promise<void> | undefined;
  // Stopping twice (a test stops it, the file's afterAll again) is one stop.
  return { ...started, config, stop: (...a) => (stopping ??= started.stop(...a)) };
}

/** A server option set as `useTestServer` takes it: the scripted model is asked for, not passed. */
export interface UseTestServerOptions extends Omit<TestServerOptions, "db" | "llm" | "env"> {
  /** Start a scripted model and point every role at it (with `over`: share that handle's model). */
  llm?: boolean;
  /** Env of the server; a function is read when the server starts (e.g. a receiver's URL, ready by then). */
  env?: Record<string, string> | (() => Record<string, string>);
  /** `false`: the database and model only; the tests start their servers with `start()`. */
  serve?: boolean;
  /** Serve the database of another handle of this file (a second process over one database). */
  over?: TestServer;
  /** Reset the scripted model before each test. */
  resetLlm?: boolean;
  /**
   * `false`: the database is created unmigrated (a test of a migration brings it to the old
   * schema and stores rows the old way in its own beforeAll); use with `serve: false`.
   */
  migrate?: boolean;
  /** `true`: no hooks at all, nothing starts (the file's tests are skipped, e.g. no browser). */
  skip?: boolean;
}

/** Another server's options: as `useTestServer`'s, over the same database and model. */
export type ExtraServerOptions = Omit<UseTestServerOptions, "over" | "resetLlm" | "serve" | "migrate" | "skip"> & {
  /**
   * Serve the database through a connection pool of its own, as a second process would (PostgreSQL
   * only: PGlite has one connection); the pool closes when the server stops.
   */
  ownPool?: boolean;
  /**
   * The server opens its pool itself from its config (DATABASE_URL set to this file's database,
   * with the env's DATABASE_POOL_MAX etc.), as `npm start` does (PostgreSQL only).
   */
  poolFromConfig?: boolean;
};

/** What `useTestServer` hands a test file: everything is ready inside tests and hooks declared after it. */
export interface TestServer {
  readonly url: string;
  readonly db: Database;
  /** The test database's own URL on a PostgreSQL server (undefined on PGlite). */
  readonly dbUrl: string | undefined;
  /** The scripted model (only with `llm: true`); safe to keep in a module-level const. */
  readonly llm: ScriptedLlm;
  readonly deps: Deps;
  readonly config: Config;
  /** The started server itself (its node `server`, `stop`). */
  readonly started: StartedTestServer;
  /** `Authorization: Bearer <token>` with a JSON content type. */
  headers(token: string): Record<string, string>;
  /** A request to this server: `path` starts with `/`. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /**
   * Another server over this file's database (with `llm: true`, this handle's scripted model),
   * e.g. one with other settings; stopped after the file unless the test stops it first.
   */
  start(o?: ExtraServerOptions): Promise<StartedTestServer>;
  /** Stops the server now (a test of shutdown); the file's afterAll does not stop it again. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Vitest hooks that own a test file's server: its database (fresh, migrated unless `migrate:
 * false`; or `over` another handle's), the scripted model when asked, the server with its tokens and env, and any other
 * server the tests start through `start()` — all stopped and dropped after the file.
 *
 * `const s = useTestServer({ llm: true, tokens: "a:tok-a" }); … fetch(`${s.url}/…`); s.llm.script(…)`
 */
export function useTestServer(o: UseTestServerOptions = {}): TestServer {
  const { over, resetLlm, llm: wantsLlm, serve: serves = true, env, migrate, skip, ...serverOptions } = o;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let model: ScriptedLlm | undefined;
  let main: StartedTestServer | undefined;
  const others: StartedTestServer[] = [];
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`test server not ready: no ${what} (use inside tests and later hooks)`);
    return v;
  };
  const db = () => (over ? over.db : ready(database, "database").db);
  const llm = () => (over ? over.llm : ready(model, "scripted model (useTestServer({ llm: true }))"));
  const dbUrl = () => (over ? over.dbUrl : database?.url);
  const server = () => ready(main, "server");

  const start = async ({ env: e, ownPool, poolFromConfig, ...extra }: ExtraServerOptions = {}) => {
    const url = dbUrl();
    if ((ownPool || poolFromConfig) && !url)
      throw new Error("ownPool / poolFromConfig: a pool of its own needs the PostgreSQL server (DATABASE_URL)");
    const pool = ownPool ? await openDatabase({ url, max: 8, migrate: false }) : undefined;
    const env = typeof e === "function" ? e() : e;
    const s = await startTestServer({
      ...extra,
      env: poolFromConfig ? { ...env, DATABASE_URL: url! } : env,
      db: poolFromConfig ? undefined : (pool ?? db()),
      llm: extra.llm ? llm() : undefined,
    }).catch(async (err: unknown) => {
      await pool?.close();
      throw err;
    });
    let stopping: Promise<void> | undefined;
    // The pool closes after the server, once however often it is stopped.
    const started: StartedTestServer = pool
      ? { ...s, stop: (...a) => (stopping ??= s.stop(...a).then(() => pool.close())) }
      : s;
    others.push(started);
    return started;
  };

  // One hook each (each with the whole hook timeout): PGlite's boot and migrations alone take seconds.
  if (!over && !skip)
    beforeAll(async () => {
      database = await createTestDatabase({ migrate });
    });
  if (wantsLlm && !over && !skip)
    beforeAll(async () => {
      model = await startScriptedLlm();
    });
  if (serves && !skip)
    beforeAll(async () => {
      main = await startTestServer({
        ...serverOptions,
        env: typeof env === "function" ? env() : env,
        db: db(),
        llm: wantsLlm ? llm() : undefined,
      });
    });
  if (!skip)
    afterAll(async () => {
      for (const s of others.reverse()) await s.stop();
      await main?.stop();
      await model?.close();
      await database?.drop();
    });
  if (resetLlm && !skip) beforeEach(() => llm().reset());

  return {
    get url() {
      return server().url;
    },
    get db() {
      return db();
    },
    get dbUrl() {
      return dbUrl();
    },
    llm: lazyLlm(llm),
    get deps() {
      return server().deps;
    },
    get config() {
      return server().config;
    },
    get started() {
      return server();
    },
    headers: (token) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" }),
    fetch: (path, init) => fetch(`${server().url}${path}`, init),
    start,
    stop: (graceMs) => server().stop(graceMs),
  };
}

/**
 * Plain HTTP servers for fetch handlers on loopback (fake upstreams: an MCP server, a slow
 * endpoint): `const serveFetch = useFetchServers(); … const url = await serveFetch(handler)`.
 * Every one is closed after the file.
 */
export function useFetchServers(): (handler: (req: Request) => Response | Promise<Response>) => Promise<string> {
  const started: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const s of started) await s.close();
  });
  return async (handler) => {
    const s = await startFetchServer(handler);
    started.push(s);
    return s.url;
  };
}

/** Listens on an ephemeral loopback port with a fetch handler; the caller closes it. */
export function startFetchServer(
  handler: (req: Request) => Response | Promise<Response>,
): Promise<{ server: ServerType; url: string; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const server = serve({ fetch: handler, port: 0, hostname: "127.0.0.1" }, (info) =>
      resolve({
        server,
        url: `http://127.0.0.1:${info.port}`,
        // Idle keep-alive sockets would hold close() for their timeout.
        close: () => new Promise<void>((r) => (server.close(() => r()), closeAll(server))),
      }),
    );
  });
}

const closeAll = (s: ServerType) => (s as { closeAllConnections?: () => void }).closeAllConnections?.();
