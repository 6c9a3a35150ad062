import type { AnyStateMachine } from "xstate";
import type { SettingsSource } from "../../driver/system";
import type { MachineEntry } from "../../visualizations/catalog";
import { stepMachineFor } from "./booking-steps.machine";
import { createClinicDialogueMachine } from "./dialogue.machine";
import { defaultRegistry } from "./registry";
import { loadRegistry } from "./registry-load";
import type { Registry } from "./types";

/** The clinic's machines are generated from the tenant's settings: drawn from its active ones (or the seed's). */
export async function clinicDiagrams(source: SettingsSource): Promise<MachineEntry[]> {
  return clinicEntries(source ? (await loadRegistry(source.sql, source.tenantId)).registry : defaultRegistry());
}

type ClinicCtx = {
  state?: {
    activeBranch?: string | null;
    step?: string | null;
    suspended?: { intent: string; step: string | null } | null;
  };
};

const stepsEntry = (registry: Registry, branch: string): MachineEntry => ({
  id: `steps-${branch}`,
  title: `Шаги ветки ${branch}`,
  description:
    "Пошаговый сценарий ветки, сгенерированный из её настроек: по состоянию на шаг, по переходу на каждый allowed_next за его защитными условиями.",
  conversationKind: "clinic",
  snapshotMachineId: "clinic-dialogue",
  // The generated machine's state type is `never` (states built at run time): widen it for drawing.
  build: () =>
    stepMachineFor(registry.stepGraphs[branch as keyof Registry["stepGraphs"]]!) as unknown as AnyStateMachine,
  position(snapshot) {
    const s = (snapshot.context as ClinicCtx | undefined)?.state;
    if (s?.activeBranch === branch && s.step)
      return { value: s.step, caption: `активная ветка ${branch}, шаг ${s.step}` };
    if (s?.suspended?.intent === branch && s.suspended.step)
      return { value: s.suspended.step, caption: `сценарий отложен на шаге ${s.suspended.step}` };
    return null;
  },
});

export function clinicEntries(registry: Registry): MachineEntry[] {
  return [
    {
      id: "clinic-dialogue",
      title: "Диалог клиники",
      description:
        "Диалог клиники, сгенерированный из настроек (seed 003): область patient — по состоянию на ветку, у пошаговой ветки её шаги и история (H) для возврата; " +
        "возврат, удержание, переключение, защита от петли, боковой вопрос, красные флаги и освобождение оператором — переходы с условиями. Область turn — ход: маршрутизатор → (база знаний) → ветка.",
      conversationKind: "clinic",
      snapshotMachineId: "clinic-dialogue",
      build: () => createClinicDialogueMachine(registry) as unknown as AnyStateMachine,
      position(snapshot) {
        const s = (snapshot.context as ClinicCtx | undefined)?.state;
        const where = s?.activeBranch
          ? `ветка ${s.activeBranch}${s.step ? `, шаг ${s.step}` : ""}`
          : "ветка ещё не выбрана";
        return { value: snapshot.value, caption: `между ходами: ${where}` };
      },
    },
    ...Object.keys(registry.stepGraphs).map((b) => stepsEntry(registry, b)),
  ];
}
