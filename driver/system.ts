import type { OperatorAction, OperatorResult } from "./operator-action";
import type { Role } from "../llm/types";
import type { OfflineResponder } from "../llm/offline";
import type { Sql, Tx } from "../storage/db";
import type { MachineEntry } from "../visualizations/catalog";
import type { MachineSpec } from "./machine-spec";

/** Where a system's settings-generated machines come from: a tenant's active settings, or (null) the seed settings. */
export type SettingsSource = { sql: Tx; tenantId: string } | null;

/**
 * One dialogue system (clinic, Workbench, Evidence, …) as the rest of the project sees it.
 * Each `systems/<name>/index.ts` exports one; `systems/index.ts` lists them, and everything
 * that used to name the systems one by one — route registration, the replay route's machine
 * lookup, the diagram catalog, conversation kinds, offline responders, model roles — reads the
 * list. `App`/`Deps` are the gateway's types (a Hono sub-app, http/deps.ts): the driver knows no HTTP.
 */
export interface DialogueSystem<App = unknown, Deps = unknown, Contract = unknown> {
  name: string;
  /** Its part of the wire contract (request bodies, success bodies, SSE events, operations): the gateway documents it. */
  contract: Contract;
  /**
   * `conversations.kind` values this system creates: the server adds them to the kinds the
   * database accepts at start (storage/conversation-kinds.ts), and the inbox filter and the
   * machine catalog's schema list them. Its `name` is the kind its inbox listing shows.
   */
  kinds: readonly string[];
  /**
   * The system's routes (patient/user API and its operator routes) as one sub-app, built from the
   * gateway's deps; the gateway mounts it under its own auth, role, error and logging middleware.
   */
  routes(deps: Deps): App;
  /** Machines whose definition does not depend on settings: replayed by spec id and version. */
  specs: readonly MachineSpec[];
  /** A machine generated from settings, as the log label names it (null: not one of this system's). */
  specAt?(sql: Tx, tenantId: string, machineId: string, settings: string): Promise<MachineSpec | null>;
  /** Diagram catalog entries (GET /v1/machines, the Stately inspector bridge, `npm run diagrams`). */
  diagrams(source: SettingsSource): Promise<MachineEntry[]> | MachineEntry[];
  /** Deterministic stand-ins for the model when none is configured (llm/offline.ts chains them per role). */
  offline: readonly { role: Role; respond: OfflineResponder }[];
  /** Model roles the system calls (each configurable as LLM_MODEL_<ROLE>). */
  modelRoles: readonly Role[];
  /**
   * What the operators' inbox asks of the system's conversations: their state for the transcript
   * view, and an operator's action — take, a message to the user, release, close — as an event of
   * the system's machine (systems/clinic/operator-turn.ts), which writes the inbox fields with it.
   * Absent: the inbox shows messages only; close and release change the row alone, take and
   * messages are refused.
   */
  inbox?: {
    state(sql: Sql, conversationId: string): Promise<unknown>;
    operate(
      sql: Sql,
      tenantId: string,
      conversationId: string,
      action: OperatorAction,
      o: { webhook: boolean },
    ): Promise<OperatorResult>;
    /** Stored messages' meta (in seq order) as the transcript shows it (absent: as stored). */
    messagesMeta?(
      sql: Sql,
      conversationId: string,
      messages: { seq: number; meta: Record<string, unknown> }[],
    ): Promise<Record<string, unknown>[]>;
  };
  /** Absolute path of the folder with the system's numbered migrations (storage/migrate.ts). */
  migrations: string | null;
}

/** Every diagram of every system, in list order. */
export async function machineCatalog(
  systems: readonly DialogueSystem[],
  source: SettingsSource,
): Promise<MachineEntry[]> {
  return (await Promise.all(systems.map((s) => s.diagrams(source)))).flat();
}

/** The machine a replay log label names: a fixed spec by id, else one generated from the settings the label names. */
export async function replaySpec(
  systems: readonly DialogueSystem[],
  sql: Tx,
  tenantId: string,
  id: string,
  settings?: string,
): Promise<MachineSpec | null> {
  for (const s of systems) {
    if (settings && s.specAt) {
      const spec = await s.specAt(sql, tenantId, id, settings);
      if (spec) return spec;
    }
    const fixed = s.specs.find((spec) => spec.id === id);
    if (fixed) return fixed;
  }
  return null;
}

/** Every conversation kind the listed systems create. */
export const conversationKinds = (systems: readonly Pick<DialogueSystem, "kinds">[]): string[] => [
  ...new Set(systems.flatMap((s) => s.kinds)),
];

/** Every model role the listed systems call. */
export const modelRoles = (systems: readonly DialogueSystem[]): Role[] => [
  ...new Set(systems.flatMap((s) => s.modelRoles)),
];
