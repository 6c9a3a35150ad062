import type { AnyStateMachine } from "xstate";
import { buildRegistry } from "../../systems/clinic/registry";
import { seedBookingSteps } from "../../systems/clinic/seed-booking-steps";
import { seedBranches } from "../../systems/clinic/seed-branches";
import { createStepMachine } from "../../systems/clinic/booking-steps.machine";
import { clarificationMachine } from "../../systems/workbench/clarification.machine";
import { createClinicDialogueMachine } from "../../systems/clinic/dialogue.machine";
import { interactionMachine } from "../../systems/workbench/interaction.machine";
import { outcomeStats, type OutcomeStats } from "../../storage/outcome-stats";
import { loadClinicKb, runClinicCase, type ClinicTurnResult } from "./clinic-run";
import { coverageOf, installCoverage, type CoverageRecorder, type MachineCoverage } from "./coverage";
import type { Datasets } from "./dataset";
import { runEvidenceCase, type EvidenceTurnResult } from "./evidence-run";
import { clinicMetrics, workbenchMetrics, type ClinicMetrics, type WorkbenchMetrics } from "./metrics";
import { evidenceMetrics, type EvidenceMetrics } from "./evidence-metrics";
import { startModelServer, type Upstream } from "./model-server";
import { newRecording, recordTurn, turnKey, type Recording } from "./recording";
import type { Script } from "./steps";
import { startTarget, type EvalConfig } from "./target";
import { runWorkbenchCase, type WorkbenchTurnResult } from "./workbench-run";

/** One configuration over the datasets: start the model and the server, run every case, measure. */

export type Suite = "workbench" | "clinic" | "evidence";
export type Mode = "scripted" | "live" | "replay";

export interface RunOptions {
  mode: Mode;
  config: EvalConfig;
  suites: Suite[];
  datasets: Datasets;
  filter?: RegExp;
  upstream?: Upstream;
  replay?: Recording;
  log?: (line: string) => void;
}

export interface ConfigReport {
  config: EvalConfig;
  mode: Mode;
  startedAt: string;
  durationMs: number;
  workbench: WorkbenchMetrics | null;
  clinic: ClinicMetrics | null;
  evidence: EvidenceMetrics | null;
  /** Why a suite did not run (e.g. the evidence endpoints are not registered yet). */
  skipped: Record<string, string>;
  outcomes: OutcomeStats | null;
  coverage: MachineCoverage[];
  recording: Recording;
  turns: Array<WorkbenchTurnResult | ClinicTurnResult | EvidenceTurnResult>;
}

let recorder: CoverageRecorder | null = null;
let evidenceMachine: AnyStateMachine | null = null;

/** Installed once per process: machines built later bind the wrapped methods for good. */
async function coverage(): Promise<CoverageRecorder> {
  if (!recorder) {
    evidenceMachine = await import("../../systems/evidence/conversation.machine").then((m) => (m as { evidenceSpec?: { machine: AnyStateMachine } }).evidenceSpec?.machine ?? null, () => null);
    recorder = installCoverage([interactionMachine, clarificationMachine, ...(evidenceMachine ? [evidenceMachine] : [])] as AnyStateMachine[]);
  }
  return recorder;
}

function coveredMachines(suites: Suite[]): AnyStateMachine[] {
  const out: AnyStateMachine[] = [];
  if (suites.includes("workbench")) out.push(interactionMachine as AnyStateMachine, clarificationMachine as AnyStateMachine);
  if (suites.includes("clinic")) {
    const registry = buildRegistry(Object.values(seedBranches), [seedBookingSteps]);
    out.push(createClinicDialogueMachine(registry) as AnyStateMachine, createStepMachine(seedBookingSteps) as unknown as AnyStateMachine);
  }
  if (suites.includes("evidence") && evidenceMachine) out.push(evidenceMachine);
  return out;
}

export async function evaluate(o: RunOptions): Promise<ConfigReport> {
  const log = o.log ?? (() => {});
  const t0 = performance.now();
  const rec = await coverage();
  rec.reset();
  const models = await startModelServer(o.mode === "live" && o.upstream ? { upstream: o.upstream } : {});
  const target = await startTarget({ modelBaseURL: models.baseURL, live: o.mode === "live", config: o.config });
  const recording = newRecording(o.mode === "live" ? o.upstream : undefined);
  const keep = (id: string) => !o.filter || o.filter.test(id);
  const scriptFor = (suite: Suite) => (caseId: string, turn: number, dataset: Script | undefined): Script => {
    if (o.mode === "replay") return o.replay?.turns[turnKey(suite, caseId, turn)] ?? {};
    return dataset ?? {};
  };
  const skipped: Record<string, string> = {};
  const wb: WorkbenchTurnResult[] = [];
  const cl: ClinicTurnResult[] = [];
  const ev: EvidenceTurnResult[] = [];
  const startedAt = new Date().toISOString();
  try {
    if (o.suites.includes("workbench")) {
      for (const c of o.datasets.workbench.filter((x) => keep(x.id))) {
        const turns = await runWorkbenchCase(target.client, models, c, o.datasets.workspaces.get(c.workspace)!, scriptFor("workbench"));
        turns.forEach((t) => recordTurn(recording, turnKey("workbench", t.caseId, t.turn), t.calls));
        wb.push(...turns);
      }
      log(`  workbench: ${wb.length} turns`);
    }
    if (o.suites.includes("clinic")) {
      await loadClinicKb(target.client, o.datasets.clinicKb);
      for (const c of o.datasets.clinic.filter((x) => keep(x.id))) {
        const turns = await runClinicCase(target.client, models, c, scriptFor("clinic"));
        turns.forEach((t) => recordTurn(recording, turnKey("clinic", t.caseId, t.turn), t.calls));
        cl.push(...turns);
      }
      log(`  clinic: ${cl.length} turns`);
    }
    if (o.suites.includes("evidence")) {
      const probe = await target.client.json("POST", "/v1/evidence/conversations", {});
      if (probe.status === 404) skipped.evidence = "the evidence endpoints are not registered in server/app.ts";
      else if (!o.datasets.evidence.length) skipped.evidence = "no evidence dataset";
      else {
        for (const c of o.datasets.evidence.filter((x) => keep(x.id))) {
          const turns = await runEvidenceCase(target.client, models, c, scriptFor("evidence"));
          turns.forEach((t) => recordTurn(recording, turnKey("evidence", t.caseId, t.turn), t.calls));
          ev.push(...turns);
        }
        log(`  evidence: ${ev.length} turns`);
      }
    }
    const outcomes = await outcomeStats(target.db.sql, { tenantId: "default" });
    return {
      config: o.config,
      mode: o.mode,
      startedAt,
      durationMs: performance.now() - t0,
      workbench: wb.length ? workbenchMetrics(wb) : null,
      clinic: cl.length ? clinicMetrics(cl) : null,
      evidence: ev.length ? evidenceMetrics(ev) : null,
      skipped,
      outcomes,
      coverage: coverageOf(coveredMachines(o.suites.filter((s) => s !== "evidence" || ev.length > 0)), rec.taken),
      recording,
      turns: [...wb, ...cl, ...ev],
    };
  } finally {
    await target.stop();
    await models.close();
  }
}
