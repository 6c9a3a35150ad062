import { describe, expect, it } from "vitest";
import { useTestServer } from "../../utils/server";
import { eventsNamed, postSse } from "../../utils/sse";
import { INTERACTION_MACHINE_VERSION } from "../../../systems/workbench/interaction.machine";
import { workspace } from "./fixtures";

/**
 * An Interaction stored by interaction v1 (before `model.failed` and `replyInTurn`): its log
 * replays through the current version to its migrated snapshot, its next turn migrates it, and it still replays.
 * The offline model provider answers, so the log holds real effect results.
 */
const server = useTestServer({ env: { RUN_DETACH_GRACE_MS: "0" } });
const H = { "content-type": "application/json" };

type Machine = {
  key: string;
  machineVersion: number;
  replayed: boolean;
  matches: boolean | null;
  definitions: (string | null)[];
};
const replay = async (conv: string, key: string) => {
  const r = await fetch(`${server.url}/v1/conversations/${conv}/replay?key=${encodeURIComponent(key)}`);
  expect(r.status).toBe(200);
  return ((await r.json()) as { machines: Machine[] }).machines[0]!;
};
const post = async (conv: string, body: object) => {
  const r = await postSse(`${server.url}/v1/workbench/conversations/${conv}/messages`, body, H);
  expect(eventsNamed(r, "done")).toHaveLength(1);
  return r;
};

describe("an Interaction stored by interaction v1", () => {
  it("replays its v1 log through the current version, migrates on the next turn and still replays", async () => {
    const { conversationId: conv } = (await (
      await fetch(`${server.url}/v1/workbench/conversations`, { method: "POST", headers: H, body: "{}" })
    ).json()) as { conversationId: string };
    const r = await post(conv, { text: "Покажи композицию «Расчёт скидки»", workspace });
    const q = eventsNamed(r, "clarification_required")[0] as {
      id: string;
      interactionId: string;
      candidates: { candidateId: string }[];
    };
    expect(q).toBeDefined();
    const key = `interaction:${q.interactionId}`;
    // What a v1 server left behind: the snapshot without `replyInTurn`, the log labelled v1.
    await server.db.sql`
      update machine_snapshots set machine_version = 1, snapshot = snapshot::jsonb #- '{context,replyInTurn}'
      where key = ${key}`;
    await server.db.sql`
      update machine_events set machine = 'interaction@1' where conversation_id = ${conv} and snapshot_key = ${key}`;
    const [v1] = await server.db.sql<{ snapshot: { context: Record<string, unknown> } }[]>`
      select snapshot from machine_snapshots where key = ${key}`;
    expect(v1!.snapshot.context).not.toHaveProperty("replyInTurn");
    expect(await replay(conv, key)).toMatchObject({ machineVersion: 1, replayed: true, matches: true });

    // The answer's continuation restores the v1 snapshot through the migration and stores v2.
    const done = await post(conv, {
      text: "первую",
      workspace,
      interactionId: q.interactionId,
      replyToClarificationId: q.id,
      selectedCandidateId: q.candidates[0]!.candidateId,
    });
    expect(eventsNamed(done, "final")[0]).toMatchObject({ status: "completed", planVersion: 2 });
    const [v2] = await server.db.sql<{ machine_version: number; snapshot: { context: Record<string, unknown> } }[]>`
      select machine_version, snapshot from machine_snapshots where key = ${key}`;
    expect(v2!.machine_version).toBe(INTERACTION_MACHINE_VERSION);
    expect(v2!.snapshot.context.replyInTurn).toBeNull();
    const after = await replay(conv, key);
    expect(after).toMatchObject({ machineVersion: INTERACTION_MACHINE_VERSION, replayed: true, matches: true });
    expect(after.definitions).toEqual(["interaction@1", `interaction@${INTERACTION_MACHINE_VERSION}`]);
  });
});
