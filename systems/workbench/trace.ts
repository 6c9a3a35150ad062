// The numbered debug stages of seed 001 (CONTRACT §4), recorded by the driver's one stage
// recorder in order mode. Stages report through a sink so the pure pipeline never knows whether
// they become SSE `stage` events, files, or nothing.
import { CONTRACT_STAGES, redact, StageRecorder, type StageSink } from "../../driver/stages";

export { type StageRecord, type StageStatus } from "../../driver/stages";

export const STAGES = CONTRACT_STAGES;
export type StageId = (typeof STAGES)[number][0];

/** The driver's scrub (one for every system), under the name the Workbench's callers know. */
export const scrub = (value: unknown): unknown => redact(value);

/**
 * Stages in id order: each stage is reported once; `finish()` reports every stage not yet
 * reported as skipped, so the sequence 00–12 is always complete and diagnosable.
 */
export class StageTrace extends StageRecorder<StageId> {
  constructor(sink: StageSink = () => {}, secrets: readonly string[] = []) {
    super({ stages: STAGES, inOrder: true, sink, secrets });
  }
}
