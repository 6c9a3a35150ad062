import type { AnyStateMachine } from "xstate";
import type { Registry } from "../systems/clinic/types";
import { stepMachineFor } from "../systems/clinic/booking-steps.machine";
import { clarificationMachine } from "../systems/workbench/clarification.machine";
import { createClinicDialogueMachine } from "../systems/clinic/dialogue.machine";
import { evidenceMachine } from "../systems/evidence/conversation.machine";
import { interactionMachine } from "../systems/workbench/interaction.machine";

/**
 * Every machine the project runs, as something that can be drawn: how to build it (the clinic's
 * machines are generated from the tenant's settings, so they take the registry), which stored
 * snapshot shows a conversation's position in it, and how to read that position.
 */

export interface Position {
  /** A state value of this machine. */
  value: unknown;
  caption: string;
}

export interface MachineEntry {
  /** URL id: `/v1/machines/{id}/diagram`. */
  id: string;
  title: string;
  description: string;
  conversationKind: "clinic" | "workbench" | "evidence";
  /** `machine_id` of the stored snapshot that tells where a conversation is. */
  snapshotMachineId: string;
  build(registry: Registry): AnyStateMachine;
  /** Reads the position from that snapshot (null: the conversation is not in this machine now). */
  position(snapshot: { value?: unknown; context?: Record<string, unknown> }, key: string): Position | null;
}

type ClinicCtx = { state?: { activeBranch?: string | null; step?: string | null; suspended?: { intent: string; step: string | null } | null } };

const stepsEntry = (branch: string): MachineEntry => ({
  id: `steps-${branch}`,
  title: `Шаги ветки ${branch}`,
  description: "Пошаговый сценарий ветки, сгенерированный из её настроек: по состоянию на шаг, по переходу на каждый allowed_next за его защитными условиями.",
  conversationKind: "clinic",
  snapshotMachineId: "clinic-dialogue",
  // The generated machine's state type is `never` (states built at run time): widen it for drawing.
  build: (registry) => stepMachineFor(registry.stepGraphs[branch as keyof Registry["stepGraphs"]]!) as unknown as AnyStateMachine,
  position(snapshot) {
    const s = (snapshot.context as ClinicCtx | undefined)?.state;
    if (s?.activeBranch === branch && s.step) return { value: s.step, caption: `активная ветка ${branch}, шаг ${s.step}` };
    if (s?.suspended?.intent === branch && s.suspended.step) return { value: s.suspended.step, caption: `сценарий отложен на шаге ${s.suspended.step}` };
    return null;
  },
});

export function machineCatalog(registry: Registry): MachineEntry[] {
  return [
    {
      id: "clinic-dialogue",
      title: "Диалог клиники",
      description:
        "Диалог клиники, сгенерированный из настроек (seed 003): область patient — по состоянию на ветку, у пошаговой ветки её шаги и история (H) для возврата; " +
        "возврат, удержание, переключение, защита от петли, боковой вопрос, красные флаги и освобождение оператором — переходы с условиями. Область turn — ход: маршрутизатор → (база знаний) → ветка.",
      conversationKind: "clinic",
      snapshotMachineId: "clinic-dialogue",
      build: (r) => createClinicDialogueMachine(r) as unknown as AnyStateMachine,
      position(snapshot) {
        const s = (snapshot.context as ClinicCtx | undefined)?.state;
        const where = s?.activeBranch ? `ветка ${s.activeBranch}${s.step ? `, шаг ${s.step}` : ""}` : "ветка ещё не выбрана";
        return { value: snapshot.value, caption: `между ходами: ${where}` };
      },
    },
    ...Object.keys(registry.stepGraphs).map(stepsEntry),
    {
      id: "interaction",
      title: "Workbench: запрос (Interaction)",
      description: "Один логический запрос пользователя: подготовка, уточнение, ответ; версия плана живёт в контексте.",
      conversationKind: "workbench",
      snapshotMachineId: "interaction",
      build: () => interactionMachine,
      position: (snapshot, key) => ({ value: snapshot.value, caption: `${key.replace(/^interaction:/, "")}: ${String(snapshot.value)}` }),
    },
    {
      id: "clarification",
      title: "Workbench: уточнение",
      description: "Один открытый вопрос запроса с закрытым списком кандидатов; ответ — только из него.",
      conversationKind: "workbench",
      snapshotMachineId: "clarification",
      build: () => clarificationMachine,
      position: (snapshot, key) => ({ value: snapshot.value, caption: `${key.replace(/^clarification:/, "")}: ${String(snapshot.value)}` }),
    },
    {
      id: "evidence-conversation",
      title: "Evidence workflow: ход диалога",
      description: "Интерпретация → гейт → план → инструменты → оценка покрытия → критик → ответ; между ходами — состояние разговора.",
      conversationKind: "evidence",
      snapshotMachineId: "evidence-conversation",
      build: () => evidenceMachine,
      position: (snapshot) => ({ value: snapshot.value, caption: `между ходами: ${String(snapshot.value)}` }),
    },
  ];
}
