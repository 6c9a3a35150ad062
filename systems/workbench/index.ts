import { fileURLToPath } from "node:url";
import { workbenchContract } from "./contract";
import type { HttpDialogueSystem } from "../../http/deps";
import { interactionMachine, interactionSpec } from "./interaction.machine";
import { stateLabel } from "./interaction-setup.machine";
import { offlineAnswerResponder } from "./offline-answer";
import { WORKBENCH_ROLES } from "./prompts";
import { workbenchRoutes } from "./routes";

/** Seed 001: answers over a workspace snapshot; a clarification is a child state of its Interaction. */
export const workbenchSystem: HttpDialogueSystem = {
  name: "workbench",
  contract: workbenchContract,
  kinds: ["workbench"],
  routes: workbenchRoutes,
  specs: [interactionSpec],
  diagrams: () => [
    {
      id: "interaction",
      title: "Workbench: запрос (Interaction)",
      description:
        "Один логический запрос пользователя: подготовка, уточнение (вопрос открыт → разбор ответа), ответ; версия плана и открытый вопрос живут в контексте.",
      conversationKind: "workbench",
      snapshotMachineId: "interaction",
      build: () => interactionMachine,
      position: (snapshot, key) => ({
        value: snapshot.value,
        caption: `${key.replace(/^interaction:/, "")}: ${stateLabel(snapshot)}`,
      }),
    },
  ],
  offline: [{ role: "answer", respond: offlineAnswerResponder }],
  modelRoles: WORKBENCH_ROLES,
  migrations: fileURLToPath(new URL("./migrations", import.meta.url)),
};
