import { fileURLToPath } from "node:url";
import { clinicContract } from "./contract";
import type { HttpDialogueSystem } from "../../http/deps";
import { clinicDiagrams } from "./diagrams";
import { clinicMessagesMeta } from "./message-meta";
import { offlineBranch, offlineRouter } from "./offline";
import { clinicSpec, registryAt } from "./registry-load";
import { clinicRoutes } from "./routes";
import { loadClinicTurnContext } from "./store/turn-context";
import { readClinicState, releaseClinicThread } from "./turn";

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
    async release(sql, tenantId, threadId) {
      // An operator's release hands an escalated thread back to the bot (the machine's operator.release).
      const context = await loadClinicTurnContext(sql, tenantId, threadId, 0);
      if (context && (await readClinicState(sql, threadId)).activeBranch === "escalate_human")
        await releaseClinicThread(sql, tenantId, context);
    },
  },
  migrations: fileURLToPath(new URL("./migrations", import.meta.url)),
};
