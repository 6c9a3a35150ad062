import type { Client } from "./http";
import type { CallRecord, ModelServer } from "./model-server";
import type { Script } from "./steps";

/** What every suite records of one turn of a case: its labels, what a client saw, the model calls and the time. */
export interface TurnResultOf<Suite extends string, Expect, Observed, Diverged extends boolean = false> {
  suite: Suite;
  caseId: string;
  turn: number;
  tags: string[];
  text: string;
  expect: Expect;
  observed: Observed;
  calls: CallRecord[];
  ms: number;
  /** A reply turn whose previous turn asked nothing (the run left the labelled path): only a Workbench turn can. */
  diverged: Diverged;
}

/** Where a turn's model script comes from: the dataset's (`dataset`) live, the recording's in a replay. */
export type ScriptFor = (caseId: string, turn: number, dataset: Script | undefined) => Script;

/** What a suite's cases run against: the target's client, the scripted models and the suite's scripts. */
export interface CaseRun {
  client: Client;
  models: ModelServer;
  scriptFor: ScriptFor;
}

/** Creates the case's conversation (`POST path`) and returns its id (a thread's or a conversation's). */
async function createConversation(client: Client, path: string, caseId: string): Promise<string> {
  const created = await client.json<{ threadId?: string; conversationId?: string }>("POST", path, {});
  const id = created.body.threadId ?? created.body.conversationId;
  if (!id) throw new Error(`case ${caseId}: could not create a conversation at ${path} (HTTP ${created.status})`);
  return id;
}

/**
 * Creates the case's conversation (`POST path`) and plays its turns in order, one `play` each
 * (given the conversation's id); returns the turns' records.
 */
export async function playTurns<Turn, R>(
  client: Client,
  path: string,
  c: { id: string; turns: Turn[] },
  play: (conversationId: string, t: Turn, i: number) => Promise<R>,
): Promise<R[]> {
  const conversationId = await createConversation(client, path, c.id);
  const out: R[] = [];
  for (const [i, t] of c.turns.entries()) out.push(await play(conversationId, t, i));
  return out;
}

/** A turn's record, not diverged (only a Workbench reply turn can leave the labelled path). */
export const turnResult = <Suite extends string, Expect, Observed>(
  suite: Suite,
  c: { id: string; tags: string[] },
  turn: number,
  t: { text: string; expect: Expect },
  observed: Observed,
  calls: CallRecord[],
  ms: number,
): TurnResultOf<Suite, Expect, Observed> => ({
  suite,
  caseId: c.id,
  turn,
  tags: c.tags,
  text: t.text,
  expect: t.expect,
  observed,
  calls,
  ms,
  diverged: false,
});
