import { readFileSync, writeFileSync } from "node:fs";
import { z } from "zod";
import type { CallRecord, Upstream } from "./model-server";
import { ScriptSchema, type Script, type Step } from "./steps";

/**
 * What a live run's models said, per turn and role, in call order: `--record FILE` writes it,
 * `--replay FILE` runs the datasets again as a scripted run with these replies instead of the
 * datasets' own. Keys are `<suite>/<caseId>/<turn index>`.
 */
export const RecordingSchema = z.object({
  version: z.literal(1),
  recordedAt: z.string(),
  endpoint: z.string(),
  models: z.record(z.string(), z.string()),
  turns: z.record(z.string(), ScriptSchema),
});
export type Recording = z.infer<typeof RecordingSchema>;

export const turnKey = (suite: string, caseId: string, turn: number) => `${suite}/${caseId}/${turn}`;

export function newRecording(upstream: Upstream | undefined): Recording {
  return {
    version: 1,
    recordedAt: new Date().toISOString(),
    endpoint: upstream?.baseURL ?? "scripted",
    models: upstream?.models ?? {},
    turns: {},
  };
}

export function recordTurn(rec: Recording, key: string, calls: CallRecord[]): void {
  const script: Script = {};
  for (const c of calls) (script[c.role] ??= []).push(c.reply as Step);
  rec.turns[key] = script;
}

export function readRecording(file: string): Recording {
  return RecordingSchema.parse(JSON.parse(readFileSync(file, "utf8")));
}

export function writeRecording(file: string, rec: Recording): void {
  writeFileSync(file, `${JSON.stringify(rec, null, 1)}\n`);
}
