import type { Llm } from "../llm/client";
import { startServer, type Started } from "../http/start";
import { loadConfig } from "../http/config";
import type { Database } from "../storage/db";
import { registerTestRoutes } from "../test/utils/test-routes";
import { HttpClient, type SseEventLite, type TurnOutcome } from "./http";
import type { Script } from "./model";
import { dialogueSystems } from "../systems";

/**
 * What a benchmark turn talks to: the clinic patient chat when its routes are mounted,
 * else the foundation's test dialogue (one SSE turn through the driver, answer streamed).
 */
export interface Target {
  name: "clinic" | "test" | "floor-http";
  create(): Promise<string>;
  turn(id: string, text: string, onEvent?: (e: SseEventLite) => void): Promise<TurnOutcome>;
}

export const REPLY =
  "Добрый день! Конечно, помогу: расскажите, пожалуйста, что вас беспокоит и когда вам удобно прийти.";

/** Replies for every role a turn may call: the router picks general_info, the branch and answer speak. */
export const turnScript: Script = (role) => {
  switch (role) {
    case "router":
      return "general_info";
    case "branch":
    case "answer":
      return REPLY;
    default:
      return "{}";
  }
};

export interface BenchServer {
  started: Started;
  client: HttpClient;
  target: Target;
  close(): Promise<void>;
}

export async function startBenchServer(
  db: Database,
  llm: Llm,
  prefer: "clinic" | "test" = "clinic",
): Promise<BenchServer> {
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", RUN_DETACH_GRACE_MS: "0" });
  const started = await startServer(config, () => {}, {
    db,
    llm,
    extend: registerTestRoutes,
    systems: dialogueSystems,
  });
  const client = new HttpClient(started.url);
  const target = prefer === "clinic" && (await clinicAvailable(client)) ? clinicTarget(client) : testTarget(client);
  return {
    started,
    client,
    target,
    async close() {
      client.close();
      await started.stop();
    },
  };
}

async function clinicAvailable(client: HttpClient): Promise<boolean> {
  const r = await client.json("POST", "/v1/clinic/threads").catch(() => ({ status: 0 }));
  return r.status === 201;
}

export function clinicTarget(client: HttpClient): Target {
  return {
    name: "clinic",
    async create() {
      const r = await client.json<{ threadId: string }>("POST", "/v1/clinic/threads");
      if (r.status !== 201) throw new Error(`create thread: ${r.status}`);
      return r.body.threadId;
    },
    turn: (id, text, onEvent) => client.sse(`/v1/clinic/threads/${id}/messages`, { text }, onEvent),
  };
}

export function testTarget(client: HttpClient): Target {
  return {
    name: "test",
    async create() {
      const r = await client.json<{ conversationId: string }>("POST", "/v1/test/conversations");
      if (r.status !== 201) throw new Error(`create conversation: ${r.status}`);
      return r.body.conversationId;
    },
    turn: (id, text, onEvent) => client.sse(`/v1/test/conversations/${id}/messages`, { text }, onEvent),
  };
}

/** A turn that did not end with `final` is a failed benchmark, not a fast one. */
export async function checkedTurn(
  t: Target,
  id: string,
  text: string,
  onEvent?: (e: SseEventLite) => void,
): Promise<void> {
  const r = await t.turn(id, text, onEvent);
  if (r.closing !== "final")
    throw new Error(
      `turn ended with ${r.closing ?? `HTTP ${r.status}`}${r.errorCode ? ` (${r.errorCode})` : ""}${r.body ? `: ${r.body.slice(0, 200)}` : ""}`,
    );
}

/** FLOOR-HTTP (bench/floor-http.ts) behind the same load client as the engine. */
export function floorHttpTarget(client: HttpClient): Target {
  return {
    name: "floor-http",
    async create() {
      const r = await client.json<{ threadId: string }>("POST", "/floor/threads");
      if (r.status !== 201) throw new Error(`create floor thread: ${r.status}`);
      return r.body.threadId;
    },
    turn: (id, text, onEvent) => client.sse(`/floor/threads/${id}/messages`, { text }, onEvent),
  };
}
