import type { Client } from "./http";
import type { CallRecord } from "./model-server";

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

/** Creates the case's conversation (`POST path`) and returns its id (a thread's or a conversation's). */
export async function createConversation(client: Client, path: string, caseId: string): Promise<string> {
  const created = await client.json<{ threadId?: string; conversationId?: string }>("POST", path, {});
  const id = created.body.threadId ?? created.body.conversationId;
  if (!id) throw new Error(`case ${caseId}: could not create a conversation at ${path} (HTTP ${created.status})`);
  return id;
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
