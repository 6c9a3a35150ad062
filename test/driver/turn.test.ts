import { describe, expect, it } from "vitest";
import { AppError } from "../../driver/errors";
import { runTurn } from "../../driver/turn";
import { createConversation } from "../../storage/conversations";
import type { Fragment } from "postgres";
import { listMachineEvents } from "../../storage/machine-events";
import { appendMessages, listMessages, messagesInsert } from "../../storage/messages";
import { loadSnapshot } from "../../storage/snapshots";
import { counterSpec } from "../utils/counter-machine";
import { useTestDatabase } from "../utils/db";

const t = useTestDatabase();

async function conversation() {
  return (await createConversation(t.db.sql, "tenant-a", "test")).id;
}

function turn(
  conversationId: string,
  text: string,
  reply: (prompt: string) => Promise<string> | string,
  extra: Partial<Parameters<typeof runTurn>[0]> = {},
) {
  return runTurn({
    sql: t.db.sql,
    run: null,
    spec: counterSpec,
    key: conversationId,
    conversationId,
    events: [{ type: "user.message", text }],
    effects: { "effect.model": async (e) => ({ type: "model.replied", text: await reply(String(e.prompt)) }) },
    commit: (tx, s) =>
      appendMessages(tx, conversationId, [
        { role: "user", text },
        { role: "assistant", text: s.context.last ?? "" },
      ]).then(() => {}),
    ...extra,
  } as Parameters<typeof runTurn>[0]);
}

/** A model reply held back until two turns wait for it, so both have read the same row version. */
function racingReply(): () => Promise<string> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let waiting = 0;
  return () => {
    waiting++;
    if (waiting === 2) release();
    return gate.then(() => "reply");
  };
}
describe("runTurn", () => {
  it("runs effects, feeds results back and commits snapshot and messages together", async () => {
    const id = await conversation();
    const r1 = await turn(id, "привет", (p) => `эхо: ${p}`);
    expect(r1.snapshot.value).toBe("idle");
    expect(r1.snapshot.context).toMatchObject({ turns: 1, last: "эхо: привет" });
    const r2 = await turn(id, "ещё", (p) => `эхо: ${p}`);
    expect(r2.rowVersion).toBe(2);
    expect(r2.snapshot.context.turns).toBe(2);
    const msgs = await listMessages(t.db.sql, id);
    expect(msgs.map((m) => [m.seq, m.role, m.text])).toEqual([
      [1, "user", "привет"],
      [2, "assistant", "эхо: привет"],
      [3, "user", "ещё"],
      [4, "assistant", "эхо: ещё"],
    ]);
  });

  it("a turn that fails midway leaves no row behind", async () => {
    const id = await conversation();
    await turn(id, "первый", () => "ok");
    const before = await loadSnapshot(t.db.sql, id);
    await expect(
      turn(id, "второй", () => {
        throw new Error("model exploded");
      }),
    ).rejects.toThrow("model exploded");
    // Failure inside the transaction (after the snapshot write) rolls everything back too.
    await expect(
      turn(id, "третий", () => "ok", {
        commit: async (tx) => {
          await appendMessages(tx, id, [{ role: "user", text: "третий" }]);
          throw new Error("disk full");
        },
      }),
    ).rejects.toThrow("disk full");
    expect(await loadSnapshot(t.db.sql, id)).toEqual(before);
    expect((await listMessages(t.db.sql, id)).map((m) => m.text)).toEqual(["первый", "ok"]);
  });

  it("two concurrent writers of one snapshot: one commits, the other gets conflict", async () => {
    const id = await conversation();
    await turn(id, "start", () => "ok");
    // Both read the same row version, then race to write.
    const slow = racingReply();
    const results = await Promise.allSettled([turn(id, "a", slow), turn(id, "b", slow)]);
    const ok = results.filter((r) => r.status === "fulfilled");
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(ok).toHaveLength(1);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.reason).toBeInstanceOf(AppError);
    expect((failed[0]!.reason as AppError).code).toBe("conflict");
    const snap = await loadSnapshot(t.db.sql, id);
    expect(snap!.rowVersion).toBe(2);
    expect((await listMessages(t.db.sql, id)).length).toBe(4);
  });

  it("the same race on the one-statement commit (statement writes, no transaction): the loser writes nothing", async () => {
    const id = await conversation();
    const oneStatement = (text: string) => ({
      commit: undefined,
      writes: (s: { context: { last?: string } }, when: Fragment) =>
        messagesInsert(
          t.db.sql,
          id,
          [
            { role: "user", text },
            { role: "assistant", text: s.context.last ?? "" },
          ],
          null,
          { when },
        ),
      log: {},
    });
    await turn(id, "start", () => "ok", oneStatement("start"));
    const slow = racingReply();
    const results = await Promise.allSettled([
      turn(id, "a", slow, oneStatement("a")),
      turn(id, "b", slow, oneStatement("b")),
    ]);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(failed).toHaveLength(1);
    expect((failed[0]!.reason as AppError).code).toBe("conflict");
    expect((await loadSnapshot(t.db.sql, id))!.rowVersion).toBe(2);
    expect((await listMessages(t.db.sql, id)).length).toBe(4);
    // The log has the winner's turn only: its events continue the first turn's.
    const log = await listMachineEvents(t.db.sql, id, id);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log.filter((e) => (e.event as { type?: string }).type === "user.message")).toHaveLength(2);
  });

  it("migrates a snapshot written by an older machine version and refuses a newer one", async () => {
    const id = await conversation();
    const v1 = {
      status: "active",
      value: "idle",
      historyValue: {},
      context: { turns: 5, last: "старое" },
      children: {},
    };
    await t.db
      .sql`insert into machine_snapshots (key, conversation_id, machine_id, machine_version, row_version, snapshot)
                   values (${id}, ${id}, 'counter', 1, 1, ${t.db.sql.json(v1)})`;
    const r = await turn(id, "новое", () => "ответ");
    expect(r.snapshot.context).toEqual({ turns: 6, last: "ответ", history: ["новое"] });
    const stored = await loadSnapshot(t.db.sql, id);
    expect(stored!.machineVersion).toBe(2);

    const id2 = await conversation();
    await t.db
      .sql`insert into machine_snapshots (key, conversation_id, machine_id, machine_version, row_version, snapshot)
                   values (${id2}, ${id2}, 'counter', 3, 1, ${t.db.sql.json(v1)})`;
    const err = await turn(id2, "x", () => "y").catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err.message).toMatch(/версией 3/);
    expect((await loadSnapshot(t.db.sql, id2))!.machineVersion).toBe(3);
  });

  it("refuses to restore a snapshot of another machine under the same key", async () => {
    const id = await conversation();
    await t.db
      .sql`insert into machine_snapshots (key, conversation_id, machine_id, machine_version, row_version, snapshot)
                   values (${id}, ${id}, 'other', 2, 1, ${t.db.sql.json({ value: "x" })})`;
    await expect(turn(id, "x", () => "y")).rejects.toThrow(/belongs to machine other/);
  });

  it("an unhandled effect is a bug reported as an error, not a silent stall", async () => {
    const id = await conversation();
    await expect(turn(id, "x", () => "y", { effects: {} })).rejects.toThrow(/nothing handles it/);
    expect(await loadSnapshot(t.db.sql, id)).toBeNull();
  });
});
