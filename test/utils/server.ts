import { loadConfig, type Config } from "../../http/config";
import type { Deps } from "../../http/deps";
import { startServer, type Started } from "../../http/start";
import type { Database } from "../../storage/db";
import type { HttpDialogueSystem } from "../../http/deps";
import { scriptedLlmConfig, type ScriptedLlm } from "./scripted-llm";
import { dialogueSystems } from "../../systems";

export interface TestServerOptions {
  db: Database;
  /** Point every role at this scripted server; omitted → the offline provider. */
  llm?: ScriptedLlm;
  /** API_TOKENS spec, e.g. "a:tok-a,b:tok-b". */
  tokens?: string;
  env?: Record<string, string>;
  /** Dialogue systems to serve (default: systems/index.ts). */
  systems?: readonly HttpDialogueSystem[];
  extend?: (app: Parameters<NonNullable<Parameters<typeof startServer>[2]>["extend"] & {}>[0], deps: Deps) => void;
}

/** A real HTTP server on an ephemeral loopback port over the test file's database. */
export async function startTestServer(o: TestServerOptions): Promise<Started & { config: Config }> {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: "memory://",
    ...(o.tokens ? { API_TOKENS: o.tokens } : {}),
    ...o.env,
  });
  if (o.llm) config.llm = { ...config.llm, ...scriptedLlmConfig(o.llm) };
  const started = await startServer(config, () => {}, {
    db: o.db,
    extend: o.extend,
    systems: o.systems ?? dialogueSystems,
  });
  return { ...started, config };
}
