import type { HttpDialogueSystem } from "../../../http/deps";
import { echoContract } from "./contract";
import { echoMachine, echoSpec } from "./echo.machine";
import { echoRoutes } from "./routes";

/**
 * A test-only fourth dialogue system: what adding a system takes (this folder + one list entry).
 * It has no tables of its own, so no migrations: the database accepts its kind once a server
 * serving it starts (storage/conversation-kinds.ts).
 */
export const echoSystem: HttpDialogueSystem = {
  name: "echo",
  contract: echoContract,
  kinds: ["echo"],
  routes: echoRoutes,
  specs: [echoSpec],
  diagrams: () => [
    {
      id: "echo",
      title: "Эхо",
      description: "Тестовая система: одно состояние, ответ — повтор реплики.",
      conversationKind: "echo",
      snapshotMachineId: "echo",
      build: () => echoMachine,
      position: (snapshot) => ({
        value: snapshot.value,
        caption: `ходов: ${String((snapshot.context as { turns?: number } | undefined)?.turns ?? 0)}`,
      }),
    },
  ],
  offline: [{ role: "echo", respond: (messages) => `эхо: ${messages.at(-1)?.content ?? ""}` }],
  modelRoles: ["echo"],
  migrations: null,
};
