import type { HttpDialogueSystem } from "../http/deps";
import { clinicSystem } from "./clinic";
import { evidenceSystem } from "./evidence";
import { workbenchSystem } from "./workbench";

/**
 * Every dialogue system the server runs. Routes, replay, the diagram catalog, conversation
 * kinds, offline responders and model roles are read from this list: a new system is a folder
 * with an index.ts (and its migrations) plus one line here.
 */
export const dialogueSystems: readonly HttpDialogueSystem[] = [clinicSystem, workbenchSystem, evidenceSystem];
