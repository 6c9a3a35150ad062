import { fileURLToPath } from "node:url";
import { workbenchContract } from "./contract";
import type { HttpDialogueSystem } from "../../http/deps";
import { clarificationMachine, clarificationSpec } from "./clarification.machine";
import { interactionMachine, interactionSpec } from "./interaction.machine";
import { offlineAnswerResponder } from "./offline-answer";
import { WORKBENCH_ROLES } from "./prompts";
import { workbenchRoutes } from "./routes";

/** Seed 001: answers over a workspace snapshot, with clarifications as machines of their own. */
export const workbenchSystem: HttpDialogueSystem = {
  name: "workbench",
  contract: workbenchContract,
  kinds: ["workbench"],
  routes: workbenchRoutes,
  specs: [interactionSpec, clarificationSpec],
  diagrams: () => [
    {
      id: "interaction",
      title: "Workbench: запрос (Interaction)",
      description: "Один логический запрос пользователя: подготовка, уточнение, ответ; версия плана живёт в контексте.",
      conversationKind: "workbench",
      snapshotMachineId: "interaction",
      build: () => interactionMachine,
      position: (snapshot, key) => ({
        value: snapshot.value,
        caption: `${key.replace(/^interaction:/, "")}: ${String(snapshot.value)}`,
      }),
    },
    {
      id: "clarification",
      title: "Workbench: уточнение",
      description: "Один открытый вопрос запроса с закрытым списком кандидатов; ответ — только из него.",
      conversationKind: "workbench",
      snapshotMachineId: "clarification",
      build: () => clarificationMachine,
      position: (snapshot, key) => ({
        value: snapshot.value,
        caption: `${key.replace(/^clarification:/, "")}: ${String(snapshot.value)}`,
      }),
    },
  ],
  offline: [{ role: "answer", respond: offlineAnswerResponder }],
  modelRoles: WORKBENCH_ROLES,
  migrations: fileURLToPath(new URL("./migrations", import.meta.url)),
};
