import { fileURLToPath } from "node:url";
import { evidenceContract } from "./contract";
import type { HttpDialogueSystem } from "../../http/deps";
import { evidenceMachine, evidenceSpec } from "./conversation.machine";
import { ANSWER_ROLE, STRUCTURED_ROLE } from "./turn-model-steps";
import { evidenceRoutes } from "./routes";

/** Seed 002: questions over accounting data answered from evidence gathered by MCP tools. */
export const evidenceSystem: HttpDialogueSystem = {
  name: "evidence",
  contract: evidenceContract,
  kinds: ["evidence"],
  routes: evidenceRoutes,
  specs: [evidenceSpec],
  diagrams: () => [
    {
      id: "evidence-conversation",
      title: "Evidence workflow: ход диалога",
      description:
        "Интерпретация → гейт → план → инструменты → оценка покрытия → критик → ответ; между ходами — состояние разговора.",
      conversationKind: "evidence",
      snapshotMachineId: "evidence-conversation",
      build: () => evidenceMachine,
      position: (snapshot) => ({ value: snapshot.value, caption: `между ходами: ${String(snapshot.value)}` }),
    },
  ],
  offline: [],
  modelRoles: [STRUCTURED_ROLE, ANSWER_ROLE],
  migrations: fileURLToPath(new URL("./migrations", import.meta.url)),
};
