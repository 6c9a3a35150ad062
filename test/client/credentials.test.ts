import { beforeAll, describe, expect, it } from "vitest";
import { createClient, NotFoundError, type ThreadEvent } from "../../client";
import { useEvidenceMcp } from "../../systems/evidence/routes";
import { useTestServer } from "../utils/server";
import { cuttingFetch } from "./cutting-fetch";

/**
 * The typed client and conversation credentials (issue 47 item 6): `create()` keeps the credential
 * the server issued and every call about that conversation sends it — reads, turns, their resumes
 * after a cut, thread events, a run's stages, an interaction. Another client with the same shared
 * `chat` token gets NotFoundError until it is given the credential.
 */
const server = useTestServer({ llm: true, tokens: "a:tok-admin,chat@a:tok-widget" });
const llm = server.llm;

beforeAll(async () => {
  await useEvidenceMcp(server.deps, {
    endpoint: { kind: "http", url: `${server.url}/v1/evidence/mcp`, headers: { authorization: "Bearer tok-admin" } },
  });
});

describe("client: conversation credentials", () => {
  it("clinic: create keeps it; get, send (resumed across a cut), events and stages send it; a neighbour gets 404", async () => {
    const cut = cuttingFetch();
    const patient = createClient({ baseUrl: server.url, token: "tok-widget", fetch: cut.fetch, retryDelayMs: 20 });
    const neighbour = createClient({ baseUrl: server.url, token: "tok-widget" });
    const { threadId, conversationToken } = await patient.clinic.create();
    expect(patient.credentials.get(threadId)).toBe(conversationToken);

    llm.script("router", "general_info");
    llm.script("branch", 'Мы на Лесной, 5.\nSTATE_JSON: {"state_after": "answered", "slots_updated": {}}');
    // The stream is cut after its second event: the resume at /v1/runs/{id}/events carries the credential too.
    cut.cutNext(2);
    const turn = patient.clinic.send(threadId, "Какой у вас адрес?", { debug: true });
    const { final } = await turn.result();
    expect(final?.reply).toContain("Лесной");
    expect(turn.connections).toBeGreaterThan(1);

    expect((await patient.clinic.get(threadId)).messages.length).toBe(2);
    expect((await patient.runs.stages(turn.runId!, threadId)).stages.length).toBeGreaterThan(0);
    const replay = patient.runs.follow(turn.runId!, 0, { conversationId: threadId });
    expect(((await replay.result()).final as { reply?: string } | undefined)?.reply).toContain("Лесной");
    const ac = new AbortController();
    const events: ThreadEvent[] = [];
    const following = (async () => {
      for await (const e of patient.clinic.events(threadId, { signal: ac.signal })) events.push(e);
    })();
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    await following; // opened (a 404 would have thrown), then stopped

    await expect(neighbour.clinic.get(threadId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(neighbour.clinic.send(threadId, "Чужой диалог?").result()).rejects.toBeInstanceOf(NotFoundError);
    await expect(neighbour.runs.stages(turn.runId!, threadId)).rejects.toBeInstanceOf(NotFoundError);
    // Given the credential (a widget restoring it from its storage), the neighbour's client reads the thread.
    neighbour.credentials.set(threadId, conversationToken);
    expect((await neighbour.clinic.get(threadId)).threadId).toBe(threadId);
  });

  it("workbench and evidence: create, send, get, interaction; a store passed in is where credentials live", async () => {
    const store = new Map<string, string>();
    const user = createClient({ baseUrl: server.url, token: "tok-widget", credentials: store });
    const other = createClient({ baseUrl: server.url, token: "tok-widget" });

    const wb = await user.workbench.create();
    expect(store.get(wb.conversationId)).toBe(wb.conversationToken);
    const wbTurn = user.workbench.send(wb.conversationId, { text: "Что такое поле?" });
    const started = (await wbTurn.result()).events.find((e) => e.event === "run_started")!;
    const interactionId = (started.data as { interactionId: string }).interactionId;
    expect((await user.workbench.get(wb.conversationId)).interactions.map((i) => i.id)).toContain(interactionId);
    expect((await user.workbench.interaction(interactionId, wb.conversationId)).id).toBe(interactionId);
    await expect(other.workbench.get(wb.conversationId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.workbench.interaction(interactionId, wb.conversationId)).rejects.toBeInstanceOf(NotFoundError);

    const ev = await user.evidence.create();
    const evTurn = user.evidence.send(ev.conversationId, "Сколько стоит приём?");
    const evEvents = (await evTurn.result()).events;
    expect(evEvents.at(-1)?.event).toBe("done");
    expect((await user.evidence.get(ev.conversationId)).messages.length).toBeGreaterThan(0);
    await expect(other.evidence.get(ev.conversationId)).rejects.toBeInstanceOf(NotFoundError);
  });
});
