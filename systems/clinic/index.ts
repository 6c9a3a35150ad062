import { fileURLToPath } from "node:url";
import { clinicContract } from "./contract";
import type { HttpDialogueSystem } from "../../http/deps";
import { clinicDiagrams } from "./diagrams";
import { clinicMessagesMeta } from "./message-meta";
import { offlineBranch, offlineRouter } from "./offline";
import { clinicSpec, registryAt } from "./registry-load";
import { clinicRoutes } from "./routes";
import { runOperatorAction } from "./operator-turn";
import { readClinicState } from "./turn";

/** Seed 003: the clinic's patient chat, its settings and knowledge base, its generated dialogue machine. */
export const clinicSystem: HttpDialogueSystem = {
  name: "clinic",
  contract: clinicContract,
  kinds: ["clinic"],
  routes: clinicRoutes,
  // The dialogue machine is generated from the settings: none is fixed.
  specs: [],
  async specAt(sql, tenantId, machineId, settings) {
    if (machineId !== "clinic-dialogue") return null;
    // The same generated (and cached) machine a turn on those settings runs.
    const loaded = await registryAt(sql, tenantId, settings);
    return loaded ? clinicSpec(tenantId, loaded) : null;
  },
  diagrams: clinicDiagrams,
  offline: [
    { role: "router", respond: offlineRouter },
    { role: "branch", respond: offlineBranch },
  ],
  modelRoles: ["router", "branch"],
  inbox: {
    state: readClinicState,
    messagesMeta: clinicMessagesMeta,
    // Take, an operator's message, release, close: events of the dialogue machine (its `handler` region).
    operate: runOperatorAction,
  },
  migrations: fileURLToPath(new URL("./migrations", import.meta.url)),
};
