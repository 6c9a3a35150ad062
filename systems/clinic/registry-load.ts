import { buildRegistry } from "./registry";
import { seedBookingSteps } from "./seed-booking-steps";
import { seedBranches } from "./seed-branches";
import { seedRouter } from "./seed-router";
import type { Registry } from "./types";
import type { MachineSpec } from "../../driver/machine-spec";
import { CLINIC_DIALOGUE_VERSION, createClinicDialogueMachine, type ClinicDialogueMachine } from "./dialogue.machine";
import { migrateClinicDialogue } from "./dialogue-restore";
import { stageEnabled } from "../../driver/stage-switches";
import { branchCodes, ROUTER_CODE } from "./types";
import type { Tx } from "../../storage/db";
import {
  listActiveBranches,
  listActiveStepGraphs,
  listSettingsVersions,
  seedClinicSettings,
  type BranchRow,
  type StepGraphRow,
} from "./store/branches";
import { AppError } from "../../driver/errors";

export interface LoadedRegistry {
  registry: Registry;
  /** e.g. "new_booking@2,…;steps:new_booking@1" — which settings versions this turn used. */
  versions: string;
}

function seedRows() {
  return {
    branches: [...Object.values(seedBranches), seedRouter].map(({ code, version: _v, ...config }) => ({
      code,
      config,
    })),
    graphs: [seedBookingSteps].map(({ branch, version: _v, ...graph }) => ({ branch, graph })),
  };
}

/** The tenant's active settings; the seed's version 1 is written on the first request. */
export async function loadRegistry(sql: Tx, tenantId: string): Promise<LoadedRegistry> {
  let [branches, graphs] = await Promise.all([listActiveBranches(sql, tenantId), listActiveStepGraphs(sql, tenantId)]);
  // The `_router` system branch counts too (a tenant seeded before it existed gets it here).
  if (branches.length < branchCodes.length + 1 || !branches.some((b) => b.code === ROUTER_CODE)) {
    const seed = seedRows();
    await seedClinicSettings(sql, tenantId, seed.branches, seed.graphs);
    [branches, graphs] = await Promise.all([listActiveBranches(sql, tenantId), listActiveStepGraphs(sql, tenantId)]);
  }
  try {
    return fromRows(branches, graphs);
  } catch (e) {
    throw new AppError("internal", `Настройки клиники не прошли проверку: ${(e as Error).message}`);
  }
}

/** The registry built from settings rows, named by their versions ("code@v,…,steps:branch@v"). */
function fromRows(branches: BranchRow[], graphs: StepGraphRow[]): LoadedRegistry {
  const registry = buildRegistry(
    branches.map((b) => ({ ...b.config, code: b.code, version: b.version })),
    graphs.map((g) => ({ ...g.graph, branch: g.branch, version: g.version })),
  );
  const versions = [
    ...branches.map((b) => `${b.code}@${b.version}`),
    ...graphs.map((g) => `steps:${g.branch}@${g.version}`),
  ].join(",");
  return { registry, versions };
}

const registries = new Map<string, LoadedRegistry>();

/**
 * The tenant's registry for the settings versions a turn saw active (read with its context):
 * built once per versions set, since a version's rows never change — an edit writes a new
 * version. Unknown or empty versions (first request, an edit since) load from the database.
 */
export async function registryFor(sql: Tx, tenantId: string, activeVersions: string): Promise<LoadedRegistry> {
  const cached = activeVersions ? registries.get(tenantId) : undefined;
  if (cached && cached.versions === activeVersions) return cached;
  const loaded = await loadRegistry(sql, tenantId);
  if (registries.size > 1024) registries.clear();
  registries.set(tenantId, loaded);
  return loaded;
}

/**
 * The registry as it was at the named settings versions ("code@v,…,steps:branch@v", as a turn
 * logs them), built from those rows whether active now or not; null when a version is gone
 * or the string names none.
 */
export async function registryAt(sql: Tx, tenantId: string, versions: string): Promise<LoadedRegistry | null> {
  const branches: { code: string; version: number }[] = [];
  const graphs: { branch: string; version: number }[] = [];
  for (const part of versions.split(",").filter(Boolean)) {
    const m = /^(steps:)?([a-z_]+)@(\d+)$/.exec(part);
    if (!m) return null;
    if (m[1]) graphs.push({ branch: m[2]!, version: Number(m[3]) });
    else branches.push({ code: m[2]!, version: Number(m[3]) });
  }
  if (branches.length === 0) return null;
  const rows = await listSettingsVersions(sql, tenantId, branches, graphs);
  if (rows.branches.length !== branches.length || rows.graphs.length !== graphs.length) return null;
  try {
    return fromRows(rows.branches, rows.graphs);
  } catch {
    return null;
  }
}

const machines = new Map<string, ClinicDialogueMachine>();

/**
 * The dialogue machine generated from these settings (and the CLINIC_ROUTER_HINT switch, read on
 * every call); cached per settings version set. Snapshots of version 1 migrate on restore.
 */
export function clinicSpec(tenantId: string, loaded: LoadedRegistry): MachineSpec<ClinicDialogueMachine> {
  const routerHint = stageEnabled("routerHint");
  const key = `${tenantId}|${loaded.versions}|${routerHint}`;
  let machine = machines.get(key);
  if (!machine) {
    if (machines.size > 256) machines.clear();
    machines.set(key, (machine = createClinicDialogueMachine(loaded.registry, { routerHint })));
  }
  // v1's events (the same events, decided by an if/else ladder) replay through v2: the rewrite kept the
  // behaviour (test/systems/clinic/dialogue.machine-v1.test.ts); v1 kept no history state.
  return {
    id: "clinic-dialogue",
    version: CLINIC_DIALOGUE_VERSION,
    machine,
    migrate: migrateClinicDialogue,
    replaysFrom: 1,
    unrecordedBefore: ["historyValue"],
  };
}
