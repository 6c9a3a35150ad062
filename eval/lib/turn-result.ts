import { first, type Client, type SseResult } from "./http";
import type { CallRecord, ModelServer } from "./model-server";

/**
 * What every suite records of a turn: where it stands in its case, what it was labelled with,
 * what was observed, the model calls it made and how long it took.
 */
export interface TurnResult<Suite extends string, Expect, Observed, Diverged extends boolean = false> {
  suite: Suite;
  caseId: string;
  turn: number;
  tags: string[];
  text: string;
  expect: Expect;
  observed: Observed;
  calls: CallRecord[];
  ms: number;
  /** A reply turn whose previous turn asked nothing (the run left the labelled path); only the Workbench has them. */
  diverged: Diverged;
}

interface LabelledCase<Expect> {
  id: string;
  tags: string[];
  turns: Array<{ text: string; expect: Expect }>;
}

/** The fields of a turn's result that come from the dataset: its case, place, text and labels. */
export const labelledTurn = <Suite extends string, Expect>(suite: Suite, c: LabelledCase<Expect>, i: number) => ({
  suite,
  caseId: c.id,
  turn: i,
  tags: c.tags,
  text: c.turns[i]!.text,
  expect: c.turns[i]!.expect,
});

/**
 * One turn over HTTP against the scripted model server: the server is handed the turn's script
 * (and context) before the message is posted, and the calls it saw are collected after the stream ends.
 */
export async function scriptedTurn(
  client: Client,
  models: ModelServer,
  script: Parameters<ModelServer["beginTurn"]>,
  path: string,
  body: Record<string, unknown>,
): Promise<{ r: SseResult; calls: CallRecord[] }> {
  models.beginTurn(...script);
  const r = await client.sse(path, body);
  return { r, calls: models.endTurn() };
}

/** The error a turn ended with: its `error` event's code, or the JSON error of a refused request. */
export const errorCodeOf = (r: SseResult): string | null =>
  (first(r, "error") as { code?: string } | undefined)?.code ?? r.json?.error?.code ?? null;
