import type { Hono } from "hono";
import type { RunHub } from "../driver/hub";
import type { DialogueSystem } from "../driver/system";
import type { Llm } from "../llm/client";
import type { Database } from "../storage/db";
import type { ActiveTurns } from "./active-turns";
import type { AuthEnv } from "./auth";
import type { Config } from "./config";
import type { SystemContract } from "./contract";
import type { RunWaker } from "./run-waker";
import type { WebhookDispatcher } from "./webhook";

/** What every route gets: built once in main (or in a test) and passed down. */
export interface Deps {
  db: Database;
  llm: Llm;
  config: Config;
  hub: RunHub;
  /** Wakes followers of runs served by other processes (LISTEN/NOTIFY on a server). */
  waker: RunWaker;
  /** This process's id: runs it owns are marked failed if it dies. */
  instanceId: string;
  log: (line: string) => void;
  /** Sends the outbox's escalation webhooks after their turn commits. */
  webhook: WebhookDispatcher;
  /** Turns running in this process (graceful shutdown waits for them). */
  turns: ActiveTurns;
  /** The dialogue systems served (systems/index.ts's list, or a test's): routes, inbox hooks and documents read it. */
  systems: readonly HttpDialogueSystem[];
}

/** A dialogue system as the gateway mounts it (driver/system.ts, with the gateway's app and deps). */
export type HttpDialogueSystem = DialogueSystem<Hono<AuthEnv>, Deps, SystemContract>;
