import { STAGE_SWITCHES } from "../../driver/stage-switches";
import { loadConfig } from "../../http/config";
import { startServer } from "../../http/start";
import { openDatabase, type Database } from "../../storage/db";
import { Client } from "./http";
import { ROLES } from "./steps";
import { dialogueSystems } from "../../systems";

/**
 * The product under evaluation: the real server (routes, driver, machines, storage, model client)
 * started in this process on a throw-away embedded database and a loopback port, its model
 * endpoint pointed at the eval's model server. Requests go over HTTP like any client's.
 */

export interface EvalConfig {
  /** A short label for reports ("default", "WORKBENCH_PLANNER=off"). */
  name: string;
  /** Stage switches (driver/stage-switches.ts) set for this run only. */
  switches: Record<string, string>;
}

export interface Target {
  client: Client;
  db: Database;
  stop(): Promise<void>;
}

const KNOWN = new Set<string>(Object.values(STAGE_SWITCHES));

/** "default", or "WORKBENCH_PLANNER=off,WORKBENCH_RERANKER=off"; presets: all-on, deterministic. */
export function parseConfig(spec: string): EvalConfig {
  if (spec === "default" || spec === "all-on")
    return { name: spec, switches: spec === "all-on" ? Object.fromEntries([...KNOWN].map((k) => [k, "on"])) : {} };
  if (spec === "deterministic" || spec === "all-off")
    return { name: spec, switches: Object.fromEntries([...KNOWN].map((k) => [k, "off"])) };
  const switches: Record<string, string> = {};
  for (const part of spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [k, v] = part.split("=");
    if (!k || !KNOWN.has(k)) throw new Error(`unknown stage switch "${k}" (known: ${[...KNOWN].join(", ")})`);
    switches[k] = v ?? "off";
  }
  return { name: spec, switches };
}

export async function startTarget(o: {
  modelBaseURL: string;
  live: boolean;
  config: EvalConfig;
  docsDir?: string;
}): Promise<Target> {
  const saved = new Map<string, string | undefined>();
  for (const k of KNOWN) {
    saved.set(k, process.env[k]);
    if (o.config.switches[k] !== undefined) process.env[k] = o.config.switches[k];
    else delete process.env[k];
  }
  const db = await openDatabase({ dataDir: "memory://" });
  const env: Record<string, string> = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: "memory://",
    OPENAI_BASE_URL: o.modelBaseURL,
    OPENAI_API_KEY: "eval-key",
    LLM_MODEL: "eval-answer",
    LLM_TIMEOUT_MS: o.live ? (process.env.LLM_TIMEOUT_MS ?? "60000") : "10000",
    ...(o.docsDir ? { DOCS_DIR: o.docsDir } : {}),
  };
  for (const r of ROLES) env[`LLM_MODEL_${r.toUpperCase()}`] = `eval-${r}`;
  const config = loadConfig(env);
  // A scripted fault is retried once; no need to wait the production pause for it.
  if (!o.live) (config.llm as { retryDelayMs?: number }).retryDelayMs = 5;
  const started = await startServer(config, () => {}, { db, systems: dialogueSystems });
  return {
    client: new Client(started.url),
    db,
    async stop() {
      await started.stop();
      await db.close();
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    },
  };
}
