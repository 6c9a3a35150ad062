import type { Hono } from "hono";
import type { DialogueSystem } from "../driver/system";
import type { AuthEnv } from "../http/auth";
import type { Deps } from "../http/deps";
import { clinicSystem } from "./clinic";
import { evidenceSystem } from "./evidence";
import { workbenchSystem } from "./workbench";

/** A dialogue system as the gateway mounts it. */
export type HttpDialogueSystem = DialogueSystem<Hono<AuthEnv>, Deps>;

/**
 * Every dialogue system the server runs. Routes, replay, the diagram catalog, conversation
 * kinds, offline responders and model roles are read from this list: a new system is a folder
 * with an index.ts (and its migrations) plus one line here.
 */
export const dialogueSystems: readonly HttpDialogueSystem[] = [clinicSystem, workbenchSystem, evidenceSystem];
