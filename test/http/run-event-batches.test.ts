import { describe, expect, it } from "vitest";
import { createConversation } from "../../storage/conversations";
import {
  appendRunEvents,
  closeRun,
  failAbandonedRuns,
  flushRunsEvents,
  insertRun,
  listRunEvents,
  MAX_RUN_EVENTS,
  type RunEventRow,
} from "../../storage/runs";
import {
  FINAL_OF_MESSAGE,
  FINAL_OF_MESSAGE_META,
  FINAL_OF_MESSAGE_META_TEMPLATES,
  packRunEvents,
  packTokens,
  RUN_STARTED_OF_RUN,
  TOKEN_SLICES,
  unpackRunEvents,
} from "../../storage/run-events-pack";
import { onServer } from "../utils/db";
import { useTestServer } from "../utils/server";
import { readSse, type SseEvent } from "../utils/sse";
import { registerTestRoutes } from "../utils/test-routes";
import { uuidv7 } from "../../storage/time-ordered-id";
import { fixedUuid } from "../utils/ids";
import { compactMeta, registerMetaTemplate } from "../../storage/meta-defaults";
import { CLINIC_STATE } from "../../systems/clinic/message-meta";
import { initialClinicState } from "../../contract/clinic/types";
import { clinicApi } from "../utils/clinic-api";

const OWNER = fixedUuid(0xaa);

/**
 * Run events are stored coalesced — one row per flush per run, ids seq .. last_seq — while a
 * client still gets one id per event. Every id a client was sent must resume the stream: on the
 * serving process (memory) and on another one (the database), after the run and while it runs.
 */

// Two gateways on one database, each with its own hub: `two` reads only what `one` stored.
const one = useTestServer({ llm: true, extend: registerTestRoutes });
const two = useTestServer({ over: one, llm: true, extend: registerTestRoutes });
const llm = one.llm;

const TEXT = "раз два три четыре пять шесть семь восемь девять десять ";

async function runTurn(opts: { chunkDelayMs?: number; stopAfterTokens?: number } = {}) {
  const conv = (await (await fetch(`${one.url}/v1/test/conversations`, { method: "POST" })).json()) as {
    conversationId: string;
  };
  llm.script("answer", { content: TEXT.repeat(2), chunkDelayMs: opts.chunkDelayMs });
  const res = await fetch(`${one.url}/v1/test/conversations/${conv.conversationId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "считай" }),
  });
  const stop = opts.stopAfterTokens;
  const seen = (
    await readSse(res, stop ? { stopAfter: (_e, all) => all.filter((x) => x.event === "token").length >= stop } : {})
  ).events;
  return { seen, runId: (seen[0]!.data as { runId: string }).runId };
}

async function follow(base: string, runId: string, lastEventId: number): Promise<SseEvent[]> {
  const res = await fetch(`${base}/v1/runs/${runId}/events`, {
    headers: { "last-event-id": String(lastEventId) },
    signal: AbortSignal.timeout(20_000),
  });
  // A finished run with nothing after the id answers 204 (http/run-follow.ts): the client has it all.
  if (res.status === 204) return [];
  expect(res.status).toBe(200);
  return (await readSse(res)).events;
}

// Data compared as values: jsonb does not keep key order.
const shape = (es: SseEvent[]) => es.map((e) => [Number(e.id), e.event, e.data]);

/** A run's stored rows: its run_events rows, then the one its close wrote into its run row (migration 000027). */
async function storedRows(runId: string) {
  return one.db.sql<
    { seq: number; first_seq: number | null; event: string; data: [string, unknown][]; text: string }[]
  >`
    select seq, first_seq, event, data, data::text as text from (
      select seq, first_seq, event, data from run_events where run_id = ${runId}
      union all
      select tail_seq, tail_first_seq, tail_event, tail_data from runs where id = ${runId} and tail_seq is not null) x
    order by seq`;
}

/** The stored rows cover ids 1..n with no gap (a flush's batch and the commit's may overlap). */
function expectContiguous(rows: { seq: number; first_seq: number | null }[], n: number) {
  let next = 1;
  for (const r of rows) {
    expect(r.first_seq ?? r.seq).toBeLessThanOrEqual(next);
    next = Math.max(next, r.seq + 1);
  }
  expect(next - 1).toBe(n);
}

describe("coalesced run events", () => {
  it("a finished turn is stored in fewer rows than events, and resumes from every id it sent, on both processes", async () => {
    const { seen } = await runTurn();
    const runId = (seen[0]!.data as { runId: string }).runId;
    expect(seen.at(-1)!.event).toBe("done");
    expect(seen.filter((e) => e.event === "token").length).toBeGreaterThan(5);
    const rows = await storedRows(runId);
    expect(rows.length).toBeLessThan(seen.length);
    expect(rows.some((r) => r.event === "batch")).toBe(true);
    expectContiguous(rows, seen.length);
    for (let id = 0; id <= seen.length; id++) {
      expect(shape(await follow(two.url, runId, id))).toEqual(shape(seen.slice(id)));
      expect(shape(await follow(one.url, runId, id))).toEqual(shape(seen.slice(id)));
    }
  });

  const newThread = () => clinicApi(one.url).newThread();

  /**
   * One clinic turn (on a new thread unless `threadId`; the router says `intent`, the branch
   * answers `reply`, or each of `reply` in turn), served by process one: the events as sent live.
   */
  async function clinicTurn(reply: string | string[], o: { threadId?: string; intent?: string; text?: string } = {}) {
    const threadId = o.threadId ?? (await newThread());
    llm.script("router", o.intent ?? "general_info");
    llm.script("branch", ...(Array.isArray(reply) ? reply : [reply]));
    const res = await fetch(`${one.url}/v1/clinic/threads/${threadId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: o.text ?? "Когда вы работаете?" }),
    });
    return (await readSse(res)).events;
  }

  const text = (es: SseEvent[]) => es.map((e) => `${e.id}|${e.event}|${JSON.stringify(e.data)}`);

  it("a clinic turn stores its streamed tokens as slices of the final reply and resumes from every id, on both processes", async () => {
    const seen = await clinicTurn(TEXT.repeat(2));
    expect(seen.at(-2)!.event).toBe("final");
    expect(seen.filter((e) => e.event === "token").length).toBeGreaterThan(5);
    const runId = (seen[0]!.data as { runId: string }).runId;
    const row = (await storedRows(runId)).filter((r) => r.event === "batch").at(-1);
    expect(row!.data.some(([e]) => e === TOKEN_SLICES)).toBe(true);
    for (let id = 0; id <= seen.length; id++) {
      expect(shape(await follow(two.url, runId, id))).toEqual(shape(seen.slice(id)));
      expect(shape(await follow(one.url, runId, id))).toEqual(shape(seen.slice(id)));
    }
  });

  it("a clinic turn stores its reply once (the message): `final` refers to it, and resumes as the same JSON text from every id", async () => {
    const seen = await clinicTurn(TEXT.repeat(3));
    const final = seen.at(-2)!;
    expect(final.event).toBe("final");
    const reply = (final.data as { reply: string }).reply;
    expect(reply.length).toBeGreaterThan(100);
    const runId = (seen[0]!.data as { runId: string }).runId;
    const [msg] = await one.db.sql<
      { text: string }[]
    >`select text from messages where run_id = ${runId} and role = 'assistant'`;
    expect(msg!.text).toBe(reply);
    // The stored events hold no copy of the reply: the final item refers to the message.
    const stored = await storedRows(runId);
    // The events the turn had not stored when it ended are in the run's own row, written by the
    // update that closed it (migration 000027): no run_events row holds its last ids.
    const [run] = await one.db.sql<{ tail_seq: number | null }[]>`select tail_seq from runs where id = ${runId}`;
    expect(run!.tail_seq).toBe(seen.length);
    const [kept] = await one.db.sql<
      { n: number }[]
    >`select count(*)::int as n from run_events where run_id = ${runId} and seq >= ${seen.length - 1}`;
    expect(kept!.n).toBe(0);
    expect(stored.some((r) => r.text.includes(FINAL_OF_MESSAGE))).toBe(true);
    expect(stored.some((r) => r.text.includes(reply.slice(0, 40)))).toBe(false);
    // Nor the run's own ids: run_started refers to its run row.
    const threadId = (seen[0]!.data as { threadId: string }).threadId;
    expect(stored.some((r) => r.text.includes(runId) || r.text.includes(threadId))).toBe(false);
    expect(stored.some((r) => r.text.includes(RUN_STARTED_OF_RUN))).toBe(true);
    // Nor the state after the turn: the message's meta holds it.
    expect(stored.some((r) => r.text.includes(FINAL_OF_MESSAGE_META))).toBe(true);
    expect(stored.some((r) => r.text.includes('"activeBranch"'))).toBe(false);
    // Byte for byte: the same JSON text (key order included) as sent live, from every id, on both processes.
    for (let id = 0; id <= seen.length; id++) {
      expect(text(await follow(two.url, runId, id))).toEqual(text(seen.slice(id)));
      expect(text(await follow(one.url, runId, id))).toEqual(text(seen.slice(id)));
    }
    expect((await listRunEvents(one.db.sql, runId, 0)).map((e) => JSON.stringify(e.data))).toEqual(
      seen.map((e) => JSON.stringify(e.data)),
    );
  });

  it("a clinic turn's state is stored once, without the fields that hold their initial values: it resumes byte for byte and shows whole", async () => {
    const tail = (step: string, slots: object) =>
      `\nSTATE_JSON: ${JSON.stringify({ state_after: step, slots_updated: slots })}`;
    const threadId = await newThread();
    // Every counter and flag at its initial value…
    const first = await clinicTurn(`Ольга, что беспокоит?${tail("qualify", { name: "Ольга" })}`, {
      threadId,
      intent: "new_booking",
      text: "Запишите меня, я Ольга",
    });
    // …then a handoff: handoffCount and suspended are not.
    const second = await clinicTurn(["[INTENT_CHANGE: price_question]", "Общий анализ крови — 600 рублей."], {
      threadId,
      intent: "price_question",
      text: "А сколько стоит анализ крови?",
    });
    const stateOf = (seen: SseEvent[]) => {
      expect(seen.at(-2)!.event).toBe("final");
      return (seen.at(-2)!.data as { state: Record<string, unknown> }).state;
    };
    expect(stateOf(first)).toMatchObject({ step: "qualify", handoffCount: 0, softInsertionCount: 0, suspended: null });
    expect(stateOf(second)).toMatchObject({ handoffCount: 1, suspended: { intent: "new_booking", step: "qualify" } });
    for (const seen of [first, second]) {
      const state = stateOf(seen);
      const runId = (seen[0]!.data as { runId: string }).runId;
      const [msg] = await one.db.sql<
        { meta: string }[]
      >`select meta::text as meta from messages where run_id = ${runId} and role = 'assistant'`;
      // The message's meta holds the state without its initial values…
      const stored = (JSON.parse(msg!.meta) as { state: Record<string, unknown> }).state;
      expect(Object.keys(stored).length).toBeLessThan(Object.keys(state).length);
      expect(stored).not.toHaveProperty("softInsertionCount");
      // …and the run's final only names it with its template (wherever the run's events are stored:
      // its run_events rows, or its own row).
      const events = await one.db.sql<{ text: string }[]>`
        select data::text as text from run_events where run_id = ${runId}
        union all select row_to_json(r)::text from runs r where r.id = ${runId}`;
      expect(events.some((r) => r.text.includes(`"${FINAL_OF_MESSAGE_META_TEMPLATES}"`))).toBe(true);
      expect(events.some((r) => r.text.includes(`"@meta:${CLINIC_STATE.name}"`))).toBe(true);
      expect(events.some((r) => r.text.includes('"handoffCount"'))).toBe(false);
      // Byte for byte as sent live, from every id, on both processes.
      for (let id = 0; id <= seen.length; id++) {
        expect(text(await follow(two.url, runId, id))).toEqual(text(seen.slice(id)));
        expect(text(await follow(one.url, runId, id))).toEqual(text(seen.slice(id)));
      }
    }
    // The thread shows each reply's state whole, in its order.
    const thread = (await (await fetch(`${one.url}/v1/clinic/threads/${threadId}`)).json()) as {
      state: Record<string, unknown>;
      messages: { role: string; meta: Record<string, unknown> }[];
    };
    const replies = thread.messages.filter((m) => m.role === "assistant");
    const whole = (meta: Record<string, unknown>) =>
      JSON.stringify(Object.fromEntries(Object.keys(stateOf(first)).map((k) => [k, meta[k]])));
    expect(Object.keys(replies[0]!.meta).slice(0, 8)).toEqual(Object.keys(stateOf(first)));
    expect(whole(replies[0]!.meta)).toBe(JSON.stringify(stateOf(first)));
    expect(whole(replies[1]!.meta)).toBe(JSON.stringify(stateOf(second)));
    expect(JSON.stringify(thread.state)).toBe(JSON.stringify(stateOf(second)));
  });

  it("packRunEvents: a final with the message's reply is stored without it, and unpacks to the same JSON", () => {
    const events: RunEventRow[] = [
      { seq: 1, event: "run_started", data: { runId: "r" } },
      { seq: 2, event: "token", data: { delta: "При" } },
      { seq: 3, event: "token", data: { delta: "вет" } },
      { seq: 4, event: "final", data: { reply: "Привет", state: { a: 1 }, events: [] } },
      { seq: 5, event: "done", data: {} },
    ];
    const [row] = packRunEvents(events, { text: "Привет" });
    expect(JSON.stringify(row!.data)).not.toContain("Привет");
    expect(JSON.stringify(unpackRunEvents([{ ...row!, reply: "Привет" }]))).toBe(JSON.stringify(events));
    // Another reply than the message's: stored as it is.
    expect(JSON.stringify(packRunEvents(events, { text: "Пока" })[0]!.data)).toContain("Привет");
    expect(JSON.stringify(unpackRunEvents(packRunEvents(events, { text: "Пока" })))).toBe(JSON.stringify(events));
    expect(() => unpackRunEvents([{ ...row!, reply: null }])).toThrow(/assistant message is missing/);
  });

  it("packRunEvents: a final's fields the message's meta holds are stored once, in the meta", () => {
    const state = { activeBranch: "new_booking", step: "qualify", slots: { doctor: "терапевт" } };
    const events: RunEventRow[] = [
      { seq: 1, event: "final", data: { reply: "Привет", state, events: [], other: { a: 1 } } },
      { seq: 2, event: "done", data: {} },
    ];
    const meta = { state, events: [], settings: "a@1", other: { a: 2 } };
    const [row] = packRunEvents(events, { text: "Привет", meta });
    const stored = JSON.stringify(row!.data);
    expect(stored).not.toContain("терапевт");
    // Short values stay (a reference would not be shorter); a field the meta holds otherwise stays.
    expect(stored).toContain('"events":[]');
    expect(stored).toContain('"other":{"a":1}');
    expect(JSON.stringify(unpackRunEvents([{ ...row!, reply: "Привет", reply_meta: meta }]))).toBe(
      JSON.stringify(events),
    );
    expect(() => unpackRunEvents([{ ...row!, reply: "Привет", reply_meta: {} }])).toThrow(/meta has no state/);
    // A final that already holds the reference's spelling keeps its fields as they are.
    const literal: RunEventRow[] = [{ ...events[0]!, data: { reply: "Привет", state, note: "@meta" } }, events[1]!];
    const [kept] = packRunEvents(literal, { text: "Привет", meta });
    expect(JSON.stringify(kept!.data)).toContain("терапевт");
    expect(JSON.stringify(unpackRunEvents([{ ...kept!, reply: "Привет", reply_meta: meta }]))).toBe(
      JSON.stringify(literal),
    );
  });

  it("packRunEvents: a meta compacted from the final's very state this turn refers to it, and reads back the same", () => {
    const state = { ...initialClinicState(), activeBranch: "general_info", routerDecision: "general_info" };
    const stored = compactMeta({ state }, { state: CLINIC_STATE });
    const events: RunEventRow[] = [
      { seq: 1, event: "final", data: { reply: "Привет", state, events: [] } },
      { seq: 2, event: "done", data: {} },
    ];
    const [row] = packRunEvents(events, { text: "Привет", ...stored });
    expect(row!.data).toEqual([
      [FINAL_OF_MESSAGE_META_TEMPLATES, { reply: 0, state: `@meta:${CLINIC_STATE.name}`, events: [] }],
      ["done", {}],
    ]);
    expect(JSON.stringify(unpackRunEvents([{ ...row!, reply: "Привет", reply_meta: stored.meta }]))).toBe(
      JSON.stringify(events),
    );
    // Another object with the same fields refers the same.
    const [again] = packRunEvents(
      [{ ...events[0]!, data: { reply: "Привет", state: { ...state }, events: [] } }, events[1]!],
      {
        text: "Привет",
        ...stored,
      },
    );
    expect(again!.data).toEqual(row!.data);
  });

  it("packRunEvents: a final's field that the meta holds compact refers to it by its template, and unpacks to the same JSON", () => {
    const state = {
      activeBranch: "new_booking",
      routerDecision: "new_booking",
      step: "close",
      slots: { doctor: "терапевт" },
      handoffCount: 0,
      softInsertionCount: 0,
      suspended: null,
      escalationReason: null,
    };
    const notes = ["заметка о хвосте ответа"];
    const events: RunEventRow[] = [
      { seq: 1, event: "final", data: { reply: "Привет", state, events: [], notes } },
      { seq: 2, event: "done", data: {} },
    ];
    const meta = {
      state: { activeBranch: "new_booking", routerDecision: "new_booking", step: "close", slots: state.slots },
      notes,
    };
    const message = { text: "Привет", meta, compact: { state: CLINIC_STATE.name } };
    const [row] = packRunEvents(events, message);
    // The compact field by its template's name; a field stored whole beside it by the plain reference.
    expect(row!.data).toEqual([
      [FINAL_OF_MESSAGE_META_TEMPLATES, { reply: 0, state: `@meta:${CLINIC_STATE.name}`, events: [], notes: "@meta" }],
      ["done", {}],
    ]);
    const read = (r: typeof row, replyMeta: Record<string, unknown>) =>
      JSON.stringify(unpackRunEvents([{ ...r!, reply: "Привет", reply_meta: replyMeta }]));
    expect(read(row, meta)).toBe(JSON.stringify(events));
    // A template this process never registered: the read fails naming it, it returns no guess.
    const foreign = JSON.parse(JSON.stringify(row).replace(`@meta:${CLINIC_STATE.name}`, "@meta:nobody.state"));
    expect(() => read(foreign, meta)).toThrow(/"nobody\.state" is not registered/);
    // A final whose state would not come back as the same text (another key order) is stored as it is.
    const reordered: RunEventRow[] = [
      { ...events[0]!, data: { reply: "Привет", state: { handoffCount: 0, ...meta.state, suspended: null } } },
      events[1]!,
    ];
    const [kept] = packRunEvents(reordered, message);
    expect(JSON.stringify(kept!.data)).toContain("терапевт");
    expect(read(kept, meta)).toBe(JSON.stringify(reordered));
    // A final holding a value spelled like a reference: nothing in it refers to the meta.
    const literal: RunEventRow[] = [{ ...events[0]!, data: { reply: "Привет", state, note: "@meta:x" } }, events[1]!];
    const [plain] = packRunEvents(literal, message);
    expect(plain!.data).toEqual([
      [FINAL_OF_MESSAGE, { reply: 0, state, note: "@meta:x" }],
      ["done", {}],
    ]);
    expect(read(plain, meta)).toBe(JSON.stringify(literal));
    // A row stored before templates (FINAL_OF_MESSAGE_META) reads as it did: only "@meta" refers there.
    const old = {
      seq: 2,
      first_seq: 1,
      event: "batch",
      data: [
        [FINAL_OF_MESSAGE_META, { reply: 0, state: "@meta", note: `@meta:${CLINIC_STATE.name}` }],
        ["done", {}],
      ],
    };
    expect(read(old, { state })).toBe(
      JSON.stringify([
        { seq: 1, event: "final", data: { reply: "Привет", state, note: `@meta:${CLINIC_STATE.name}` } },
        { seq: 2, event: "done", data: {} },
      ]),
    );
    // A template that a registration changed would read back otherwise: a name keeps its template.
    expect(() => registerMetaTemplate(CLINIC_STATE.name, { activeBranch: null })).toThrow(/already registered/);
  });

  it("packRunEvents: run_started stores the run's own ids as references, and unpacks to the same JSON", () => {
    const run = { id: "run-1", conversationId: "conv-1" };
    const events: RunEventRow[] = [
      { seq: 1, event: "run_started", data: { runId: "run-1", conversationId: "conv-1", planVersion: 2 } },
      { seq: 2, event: "done", data: {} },
    ];
    const [row] = packRunEvents(events, undefined, run);
    expect(JSON.stringify(row!.data)).not.toMatch(/run-1|conv-1/);
    const back = (r: typeof row) => unpackRunEvents([{ ...r!, run_id: run.id, conversation_id: run.conversationId }]);
    expect(JSON.stringify(back(row))).toBe(JSON.stringify(events));
    // Read without its run's ids: an error, not a run_started naming nothing.
    expect(() => unpackRunEvents([row!])).toThrow(/run's ids/);
    // Another run's ids, or a value that is already a reference's spelling: stored as they are.
    for (const data of [
      { runId: "run-2", conversationId: "conv-2" },
      { runId: "run-1", note: "@run" },
    ]) {
      const [kept] = packRunEvents([{ seq: 1, event: "run_started", data }, events[1]!], undefined, run);
      expect(JSON.stringify(kept!.data)).not.toContain(RUN_STARTED_OF_RUN);
      expect(JSON.stringify(back(kept))).toBe(JSON.stringify([{ seq: 1, event: "run_started", data }, events[1]]));
    }
    // The usual run_started, exactly {runId, <key>: conversation id}, is stored as the key's name alone.
    for (const key of ["threadId", "conversationId"]) {
      const usual: RunEventRow[] = [
        { seq: 1, event: "run_started", data: { runId: "run-1", [key]: "conv-1" } },
        events[1]!,
      ];
      const [short] = packRunEvents(usual, undefined, run);
      expect(short!.data).toEqual([
        [RUN_STARTED_OF_RUN, key],
        ["done", {}],
      ]);
      expect(JSON.stringify(back(short))).toBe(JSON.stringify(usual));
    }
    // The same two keys the other way round keep the object form, so the order comes back as it was.
    const swapped: RunEventRow[] = [
      { seq: 1, event: "run_started", data: { threadId: "conv-1", runId: "run-1" } },
      events[1]!,
    ];
    const [obj] = packRunEvents(swapped, undefined, run);
    expect(JSON.stringify(obj!.data)).toContain('"@conversation"');
    expect(JSON.stringify(back(obj))).toBe(JSON.stringify(swapped));
  });

  it("a turn flushed several times while streaming resumes from every id on another process", async () => {
    // 60 ms between chunks, over a second in all: the 250 ms background flush, which skips a run
    // on the first tick after it began (driver/run-flusher.ts), stores it in several batches.
    const { seen, runId } = await runTurn({ chunkDelayMs: 60 });
    const rows = await storedRows(runId);
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.length).toBeLessThan(seen.length);
    expectContiguous(rows, seen.length);
    for (let id = 0; id <= seen.length; id++)
      expect(shape(await follow(two.url, runId, id))).toEqual(shape(seen.slice(id)));
  });

  it("a client that left mid-stream resumes on another process from the last id it saw while the run goes on", async () => {
    const { seen, runId } = await runTurn({ chunkDelayMs: 25, stopAfterTokens: 6 });
    const last = Number(seen.at(-1)!.id);
    const rest = await follow(two.url, runId, last);
    expect(rest.map((e) => Number(e.id))).toEqual(rest.map((_, i) => last + 1 + i));
    expect(rest.at(-1)!.event).toBe("done");
    const all = await follow(two.url, runId, 0);
    expect(shape(all.slice(0, seen.length))).toEqual(shape(seen));
    expect(shape(all.slice(seen.length))).toEqual(shape(rest));
  });
});

describe("storing batches (storage/runs.ts)", () => {
  const ev = (from: number, to: number): RunEventRow[] =>
    Array.from({ length: to - from + 1 }, (_, i) => ({
      seq: from + i,
      event: "token",
      data: { delta: `t${from + i}` },
    }));

  async function newRun(): Promise<string> {
    const conv = await createConversation(one.db.sql, "default", "test");
    const id = uuidv7();
    await insertRun(one.db.sql, { id, conversationId: conv.id, tenantId: "default", kind: "test", owner: OWNER });
    return id;
  }

  it("packs consecutive events into one row and refuses a gap", () => {
    expect(packRunEvents(ev(3, 5))).toEqual([
      {
        seq: 5,
        first_seq: 3,
        event: "batch",
        data: [
          ["token", { delta: "t3" }],
          ["token", { delta: "t4" }],
          ["token", { delta: "t5" }],
        ],
      },
    ]);
    expect(packRunEvents(ev(3, 3))).toEqual([{ seq: 3, first_seq: null, event: "token", data: { delta: "t3" } }]);
    expect(() => packRunEvents([...ev(1, 2), ...ev(4, 4)])).toThrow(/not consecutive/);
  });

  it("stores streamed tokens that slice the reply by their lengths and gives back the very same events", () => {
    const reply = "Добрый день! Чем помочь?\n\nОставьте телефон.";
    const tokens = ["Добрый", " день!", " Чем", " помочь?", "\n\n", "Оставьте", " телефон."];
    const turn: RunEventRow[] = [
      { seq: 1, event: "run_started", data: { runId: "r" } },
      { seq: 2, event: "router_decision", data: { intent: "general_info" } },
      ...tokens.map((delta, i) => ({ seq: 3 + i, event: "token", data: { delta } })),
      { seq: 10, event: "final", data: { reply, state: { step: null }, events: [] } },
      { seq: 11, event: "done", data: {} },
    ];
    const [row] = packRunEvents(turn);
    const items = row!.data as [string, unknown][];
    // The reply is stored once: no token text is left in the row.
    expect(items.filter(([e]) => e === "token")).toEqual([]);
    expect(items).toContainEqual([TOKEN_SLICES, "0:6,6,4,8,2,8,9"]);
    expect(JSON.stringify(items).split("Оставьте").length - 1).toBe(1);
    expect(unpackRunEvents([row!])).toEqual(turn);
    // Resuming inside the sliced tokens gives the rest, from the id after Last-Event-ID.
    expect(unpackRunEvents([row!], 5)).toEqual(turn.slice(5));
    // A flush that stored the first tokens: the commit's row starts mid-reply.
    const [tail] = packRunEvents(turn.slice(5));
    expect(tail!.data).toContainEqual([TOKEN_SLICES, "16:8,2,8,9"]);
    expect(unpackRunEvents([tail!])).toEqual(turn.slice(5));
  });

  it("keeps tokens that are not slices of the reply as they were", () => {
    const items: [string, unknown][] = [
      ["token", { delta: "Привет" }],
      ["token", { delta: ", мир" }],
      ["token", { delta: "[STATE_JSON]" }], // not in the reply
      ["token", { delta: "мир", extra: 1 }], // another key: kept whole
      ["token", { delta: "!" }], // a lone slice: not worth a slices item
      ["final", { reply: "Привет, мир!" }],
    ];
    const packed = packTokens(items);
    expect(packed).toEqual([[TOKEN_SLICES, "0:6,5"], items[2], items[3], items[4], items[5]]);
    const rows = [{ seq: 6, first_seq: 1, event: "batch", data: packed }];
    expect(unpackRunEvents(rows).map((e) => [e.event, e.data])).toEqual(items);
    // No reply in the batch (a background flush mid-stream): nothing changes.
    expect(packTokens(items.slice(0, 5))).toEqual(items.slice(0, 5));
  });

  it("a flush and the commit writing from the same id overlap without a gap or a repeat, in either order", async () => {
    const a = await newRun();
    await appendRunEvents(one.db.sql, a, ev(1, 4));
    await appendRunEvents(one.db.sql, a, ev(5, 9)); // the background flush
    await appendRunEvents(one.db.sql, a, ev(5, 12)); // the commit, not knowing the flush got in
    expect((await listRunEvents(one.db.sql, a, 0)).map((e) => e.seq)).toEqual(ev(1, 12).map((e) => e.seq));
    const b = await newRun();
    await appendRunEvents(one.db.sql, b, ev(1, 12));
    await appendRunEvents(one.db.sql, b, ev(1, 7)); // a late flush must not shrink what the commit stored
    expect((await listRunEvents(one.db.sql, b, 0)).map((e) => e.seq)).toEqual(ev(1, 12).map((e) => e.seq));
    expect((await listRunEvents(one.db.sql, b, 6)).map((e) => e.seq)).toEqual(ev(7, 12).map((e) => e.seq));
    expect((await listRunEvents(one.db.sql, a, 7)).map((e) => [e.seq, (e.data as { delta: string }).delta])).toEqual(
      ev(8, 12).map((e) => [e.seq, `t${e.seq}`]),
    );
  });

  it.runIf(onServer)(
    "the background flush does not wait for a turn's open commit of the same run (nor hold up the others)",
    async () => {
      const a = await newRun();
      const b = await newRun();
      await appendRunEvents(one.db.sql, b, ev(1, 4));
      let releaseTurn!: () => void;
      const turnMayCommit = new Promise<void>((r) => (releaseTurn = r));
      let turnWrote!: () => void;
      const wrote = new Promise<void>((r) => (turnWrote = r));
      // B's turn: its commit writes the unstored events 5..12 and ends the run, then stays open.
      const turn = one.db.sql.begin(async (tx) => {
        expect(
          await closeRun(
            tx,
            b,
            [...ev(5, 10), { seq: 11, event: "final", data: {} }, { seq: 12, event: "done", data: {} }],
            { status: "completed" },
          ),
        ).toBe(true);
        turnWrote();
        await turnMayCommit;
      });
      await wrote;
      // The flush that had B's 5..9 pending (and A's) completes while B's transaction is still open.
      await flushRunsEvents(
        one.db.sql,
        [
          { runId: a, events: ev(1, 3) },
          { runId: b, events: ev(5, 9) },
        ],
        { asyncCommit: true },
      );
      expect((await listRunEvents(one.db.sql, a, 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
      releaseTurn();
      await turn;
      expect((await listRunEvents(one.db.sql, b, 0)).map((e) => [e.seq, e.event])).toEqual([
        ...ev(1, 10).map((e) => [e.seq, "token"]),
        [11, "final"],
        [12, "done"],
      ]);
    },
  );

  it("crash recovery numbers the ending after the last id of a stored batch", async () => {
    const id = await newRun();
    await appendRunEvents(one.db.sql, id, ev(1, 6));
    await one.db.sql`update runs set heartbeat_at = now() - interval '1 hour' where id = ${id}`;
    expect(await failAbandonedRuns(one.db.sql, { staleAfterMs: 1000, ownerIs: OWNER })).toEqual([id]);
    expect((await listRunEvents(one.db.sql, id, 5)).map((e) => [e.seq, e.event])).toEqual([
      [6, "token"],
      // Past MAX_RUN_EVENTS: the dead process may have sent ids it never stored.
      [MAX_RUN_EVENTS + 1, "error"],
      [MAX_RUN_EVENTS + 2, "done"],
    ]);
  });
});
