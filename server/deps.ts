import type { RunHub } from "../driver/hub";
import type { Llm } from "../llm/client";
import type { Database } from "../storage/db";
import type { Config } from "./config";

/** What every route gets: built once in main (or in a test) and passed down. */
export interface Deps {
  db: Database;
  llm: Llm;
  config: Config;
  hub: RunHub;
  /** This process's id: runs it owns are marked failed if it dies. */
  instanceId: string;
  log: (line: string) => void;
}
