import { describe, expect, it } from "vitest";
import { ConflictError, createClient, type ThreadEvent } from "../../client";
import { useTestServer } from "../utils/server";
import { cuttingFetch } from "./cutting-fetch";

/** The typed client's side of issue 32: the operator's calls and the patient's thread events, resumed across a cut. */

const server = useTestServer({ llm: true, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

describe("client: takeover", () => {
  it("take, write (idempotent), release through client.inbox; client.clinic.events delivers each once, across a dropped connection", async () => {
    const cut = cuttingFetch();
    const patient = createClient({ baseUrl: server.url, fetch: cut.fetch, retryDelayMs: 20 });
    const operator = createClient({ baseUrl: server.url });
    const { threadId } = await patient.clinic.create();
    llm.script("router", "escalate_human");
    llm.script("branch", "Передаю администратору.");
    for await (const _ of patient.clinic.send(threadId, "Позовите человека")) void _;

    const ac = new AbortController();
    const seen: ThreadEvent[] = [];
    // The patient's stream is cut after its second event: the client resumes with Last-Event-ID.
    cut.cutNext(2);
    const following = (async () => {
      for await (const e of patient.clinic.events(threadId, { signal: ac.signal })) {
        seen.push(e);
        if (e.event === "conversation.released") break;
      }
    })();
    await expect(operator.inbox.write(threadId, { text: "рано" })).rejects.toBeInstanceOf(ConflictError);
    expect((await operator.inbox.take(threadId, "Мария")).status).toBe("taken");
    const first = await operator.inbox.write(threadId, { text: "Здравствуйте!" }, { idempotencyKey: "k-1" });
    const again = await operator.inbox.write(threadId, { text: "Здравствуйте!" }, { idempotencyKey: "k-1" });
    expect(again).toMatchObject({ seq: first.seq, replayed: true });
    await operator.inbox.write(threadId, { text: "Чем помочь?" });
    expect((await operator.inbox.release(threadId)).status).toBe("open");
    await following;
    ac.abort();
    expect(cut.cuts).toBe(1);
    expect(seen.map((e) => e.event)).toEqual([
      "conversation.taken",
      "operator.message",
      "operator.message",
      "conversation.released",
    ]);
    expect(seen.map((e) => e.id)).toEqual([1, 2, 3, 4]);
    const msg = seen[1]!;
    if (msg.event !== "operator.message") throw new Error("typed narrowing");
    expect(msg.data.text).toBe("Здравствуйте!");
    expect((await patient.clinic.get(threadId)).lastEventSeq).toBe(4);
  });
});
