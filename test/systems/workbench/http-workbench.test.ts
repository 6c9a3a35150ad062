import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { loadSnapshot } from "../../../storage/snapshots";
import { useTestServer } from "../../utils/server";
import { eventsNamed } from "../../utils/sse";
import { stageIds, workspace } from "./fixtures";
import {
  askWhichDiscount,
  discountRequest,
  expectReplayMatches,
  interaction,
  newConversation,
  one,
  replyTo,
  send,
  stage,
  type Json,
} from "./http-workbench-helpers";

const debugDir = mkdtempSync(join(tmpdir(), "wb-debug-"));
const server = useTestServer({ llm: true, env: { AI_DEBUG: "true", DEBUG_DIR: debugDir, RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

beforeEach(() => llm.reset());

/** The answer to clarification `q`, with its interaction, as the client sends it. */
const answer = (conv: string, q: Json, text: string, extra: Json = {}) =>
  replyTo(server.url, conv, q, text, workspace, { interactionId: q.interactionId, debug: true, ...extra });
const ask = async (text: string, extra: Json = {}) => {
  const conv = extra.conversationId ?? (await newConversation(server.url));
  const r = await send(server.url, conv, { text, workspace, debug: true, ...extra, conversationId: undefined });
  return { conv, r };
};
/** A new conversation stopped on the question which «Расчёт скидки» is meant. */
const askWhich = async () => {
  const conv = await newConversation(server.url);
  return { conv, ...(await askWhichDiscount(llm, server.url, conv, { workspace, debug: true })) };
};

describe("workbench: single turns", () => {
  it("exact identity: 0 preparatory calls, streamed answer, validated citations, stages 00–12 in order", async () => {
    llm.script("answer", "Композиция [[composition-alpha]] лежит в папке [[folder-sales]].");
    const { r } = await ask("Покажи composition-alpha");
    const started = one(r, "run_started")!;
    expect(started.interactionId).toMatch(/^interaction-/);
    expect(started.planVersion).toBe(1);
    expect(eventsNamed(r, "stage").map((s) => (s as Json).stageId)).toEqual(stageIds(12));
    // Streamed validated, sentence by sentence (doc/streaming.md): a one-sentence answer is one token.
    expect((eventsNamed(r, "token") as Json[]).map((e) => e.delta).join("")).toBe(
      "Композиция [[composition-alpha]] лежит в папке [[folder-sales]].",
    );
    const fin = one(r, "final")!;
    expect(fin).toMatchObject({
      status: "completed",
      entityCitations: ["composition-alpha", "folder-sales"],
      validation: { ok: true, issues: [] },
      modelCalls: { preparatory: 0, final: 1 },
    });
    expect(llm.count()).toBe(1);
    expect(r.events.at(-1)!.event).toBe("done");
    // The answer model got a ModelRequest, not the raw workspace.
    const sent = JSON.parse(llm.calls[0]!.messages.at(-1)!.content) as Json;
    expect(Object.keys(sent)).toEqual(["request", "plan", "context", "conversation", "workspace"]);
    expect(JSON.stringify(sent)).not.toContain("composition-kalina");
    expect((await interaction(server.url, started.interactionId)).status).toBe("completed");
  });

  it("a repeated message against the same snapshot reuses the cached index", async () => {
    const { conv } = await ask("Покажи composition-alpha");
    const { r } = await ask("Покажи composition-alpha", { conversationId: conv });
    expect(stage(r, "06")!.data.index.cached).toBe(true);
  });

  it("writes AI_DEBUG files 00–12 per run, without credentials", async () => {
    llm.script("answer", "Ок [[composition-alpha]].");
    const { r } = await ask("Покажи composition-alpha");
    const runId = one(r, "run_started")!.runId as string;
    const files = readdirSync(join(debugDir, runId)).sort();
    expect(files).toEqual([
      "00-metadata.json",
      "01-original-request.json",
      "02-normalization.json",
      "03-plan.json",
      "04-routing.json",
      "05-documentation.json",
      "06-domain-resolution.json",
      "07-interaction-clarification.json",
      "08-conversation-context.json",
      "09-adequacy-context-plan.json",
      "10-prompt-manifest.json",
      "11-model-request.json",
      "12-response-validation.json",
    ]);
    const all = files.map((f) => readFileSync(join(debugDir, runId, f), "utf8")).join("\n");
    expect(all).not.toContain("test-key");
    expect(JSON.parse(readFileSync(join(debugDir, runId, "05-documentation.json"), "utf8")).status).toBe("skipped");
  });

  it("an unsupported type answers plainly with no model call", async () => {
    const { r } = await ask("Найди процесс «Закрытие месяца»");
    expect(one(r, "final")).toMatchObject({
      status: "completed",
      modelCalls: { preparatory: 0, final: 0 },
      reasons: ["unsupported_type"],
    });
    expect(llm.count()).toBe(0);
  });

  it("the answer model failing twice is a model_unavailable error; the Interaction is failed, the question kept", async () => {
    llm.script("answer", { status: 500 }, { status: 500 });
    const { conv, r } = await ask("Покажи composition-alpha");
    expect(one(r, "error")).toMatchObject({ code: "model_unavailable" });
    expect((await interaction(server.url, one(r, "run_started")!.interactionId)).status).toBe("failed");
    const msgs = (await (await fetch(`${server.url}/v1/workbench/conversations/${conv}`)).json()) as Json;
    expect(msgs.messages.map((m: Json) => m.role)).toEqual(["user"]);
  });

  it("a planner failing falls back to the deterministic plan and the run still answers", async () => {
    llm.script("planner", { status: 500 }, { status: 500 });
    llm.script("answer", "Договор: [[entity-contract]].");
    const { r } = await ask("Найди сущность «Договор», затем покажи её");
    expect(stage(r, "03")!.data).toMatchObject({
      plannedBy: "deterministic",
      planner: { called: true, accepted: false },
    });
    expect(one(r, "final")).toMatchObject({ validation: { ok: true }, modelCalls: { preparatory: 1, final: 1 } });
  });
});

describe("workbench: the clarification loop", () => {
  it("clarify → pick → answer; the root stays, the plan version grows, a second answer is 409", async () => {
    const { conv, r, q } = await askWhich();
    expect(q).toMatchObject({ slot: "entity", question: "Какую композицию вы имеете в виду?" });
    expect(q.candidates.map((c: Json) => c.identity).sort()).toEqual([
      "composition-discount",
      "composition-discount-v1",
    ]);
    expect(one(r, "final")).toBeUndefined();
    const pick = q.candidates.find((c: Json) => c.identity === "composition-discount-v1");

    llm.script("answer", "Архивная версия [[composition-discount-v1]].");
    const r2 = await answer(conv, q, "архивную", { selectedCandidateId: pick.candidateId });
    expect(one(r2, "run_started")).toMatchObject({ interactionId: q.interactionId, planVersion: 2 });
    expect(stage(r2, "07")!.data.reply).toMatchObject({ kind: "answer", decidedBy: "click" });
    expect(stage(r2, "06")!.data.tasks[0]).toMatchObject({
      resolvedIdentity: "composition-discount-v1",
      resolvedBy: "clarification",
    });
    expect(one(r2, "final")).toMatchObject({
      status: "completed",
      entityCitations: ["composition-discount-v1"],
      modelCalls: { preparatory: 0, final: 1 },
    });

    const it1 = await interaction(server.url, q.interactionId);
    expect(it1).toMatchObject({ status: "completed", planVersion: 2 });
    expect(it1.clarifications).toHaveLength(1);
    expect(it1.clarifications[0]).toMatchObject({ id: q.id, status: "answered", slot: "entity", taskId: "task-1" });
    expect(it1.clarifications[0].answerMessageId).toBeTruthy();
    const conversation = (await (await fetch(`${server.url}/v1/workbench/conversations/${conv}`)).json()) as Json;
    expect(conversation.messages.map((m: Json) => [m.role, m.text])).toEqual([
      ["user", discountRequest],
      ["assistant", q.question],
      ["user", "архивную"],
      ["assistant", "Архивная версия [[composition-discount-v1]]."],
    ]);

    const again = await replyTo(server.url, conv, q, "первую", workspace, { selectedCandidateId: "c1" });
    expect(again.status).toBe(409);
    expect((again.json as Json).error.code).toBe("conflict");

    expect(await expectReplayMatches(server.db.sql, `interaction:${q.interactionId}`)).toBeGreaterThan(3);
    // One authority: the question lives in the Interaction's snapshot, its row is a projection.
    expect(await loadSnapshot(server.db.sql, `clarification:${q.id}`)).toBeNull();
  });

  it("a candidate id outside the snapshot is unknown_candidate (422); the question stays open", async () => {
    const { conv, q } = await askWhich();
    const forged = await replyTo(server.url, conv, q, "эту", workspace, { selectedCandidateId: "composition-alpha" });
    expect(forged.status).toBe(422);
    expect((forged.json as Json).error.code).toBe("unknown_candidate");
    expect((await interaction(server.url, q.interactionId)).clarifications[0].status).toBe("open");
  });

  it("ordinal text is resolved by code, without the classifier", async () => {
    const { conv, q } = await askWhich();
    llm.reset();
    llm.script("answer", "Ок.");
    const r2 = await answer(conv, q, "вторую");
    expect(stage(r2, "06")!.data.tasks[0].resolvedIdentity).toBe(q.candidates[1].identity);
    expect(llm.count("classifier")).toBe(0);
  });

  it("ambiguous free text goes to the classifier; an unusable answer re-asks", async () => {
    const { conv, q } = await askWhich();
    llm.reset();
    llm.script("classifier", "not json at all");
    const r2 = await answer(conv, q, "та самая, про которую говорили вчера");
    expect(llm.count("classifier")).toBe(1);
    const q2 = one(r2, "clarification_required")!;
    expect(q2.id).not.toBe(q.id);
    expect(q2.question).toMatch(/^Не удалось сопоставить ответ/);
    expect(q2.candidates.map((c: Json) => c.identity).sort()).toEqual(q.candidates.map((c: Json) => c.identity).sort());
    const it1 = await interaction(server.url, q.interactionId);
    expect(it1.status).toBe("awaiting_clarification");
    expect(it1.clarifications.map((c: Json) => c.status)).toEqual(["unclear", "open"]);
  });

  it("a free-text answer to 'not found' and a classified correction re-resolve the task (mention patch)", async () => {
    const { conv, r } = await ask("Найди композицию «Прогноз спроса»");
    const q = one(r, "clarification_required")!;
    expect(q.candidates).toEqual([]);
    llm.script("answer", "Ок [[composition-approval]].");
    const r2 = await replyTo(server.url, conv, q, "Согласование заказа", workspace, { debug: true });
    expect(stage(r2, "07")!.data.reply).toMatchObject({
      kind: "answer",
      decidedBy: "free_text_for_open_slot",
      updates: [{ field: "mention", value: "Согласование заказа" }],
    });
    expect(stage(r2, "06")!.data.tasks[0]).toMatchObject({
      status: "resolved",
      resolvedIdentity: "composition-approval",
    });
    expect(llm.count("classifier")).toBe(0);

    llm.reset();
    const { q: q3 } = await askWhichDiscount(llm, server.url, conv, { workspace });
    llm.reset();
    llm.script("classifier", '{"kind": "correction"}');
    llm.script("answer", "Ок [[composition-stock]].");
    const r4 = await replyTo(server.url, conv, q3, "Нет, найди композицию «Учёт остатков»", workspace, { debug: true });
    expect(stage(r4, "07")!.data.reply).toMatchObject({ kind: "correction", decidedBy: "classifier" });
    expect(one(r4, "run_started")!.interactionId).toBe(q3.interactionId);
    expect(stage(r4, "06")!.data.tasks[0]).toMatchObject({ resolvedIdentity: "composition-stock" });
    expect(one(r4, "final")).toMatchObject({ modelCalls: { preparatory: 1, final: 1 } });
    const it3 = await interaction(server.url, q3.interactionId);
    expect(it3.plan.tasks[0].mentions).toEqual(["Учёт остатков"]);
    expect(it3.planVersion).toBe(2);
  });

  it("cancel by code; a new independent request supersedes", async () => {
    const { conv, q } = await askWhich();
    const c = await replyTo(server.url, conv, q, "Отмена", workspace, { interactionId: q.interactionId });
    expect(one(c, "final")).toMatchObject({ status: "cancelled", modelCalls: { final: 0 } });
    expect((await interaction(server.url, q.interactionId)).status).toBe("cancelled");

    const { q: q3 } = await askWhichDiscount(llm, server.url, conv, { workspace });
    llm.script("answer", "Договор [[entity-contract]].");
    const r4 = await send(server.url, conv, { text: "Покажи сущность «Договор»", workspace });
    expect(one(r4, "run_started")!.interactionId).not.toBe(q3.interactionId);
    expect(await interaction(server.url, q3.interactionId)).toMatchObject({
      status: "superseded",
      clarifications: [{ status: "superseded" }],
    });
    await expectReplayMatches(server.db.sql, `interaction:${q3.interactionId}`);
    expect(await loadSnapshot(server.db.sql, `clarification:${q3.id}`)).toBeNull();
    // the closed question cannot be answered any more
    const late = await replyTo(server.url, conv, q3, "первую", workspace);
    expect(late.status).toBe(409);
  });

  it("workspace change: the chosen document disappeared → asked again; a changed snapshot re-resolves", async () => {
    const { conv, q } = await askWhich();
    const gone = {
      ...workspace,
      generation: "8",
      documents: workspace.documents.filter((d) => d.identity !== "composition-discount-v1"),
    };
    const pick = q.candidates.find((c: Json) => c.identity === "composition-discount-v1");
    const r2 = await replyTo(server.url, conv, q, "архивную", gone, {
      selectedCandidateId: pick.candidateId,
      debug: true,
    });
    expect(stage(r2, "07")!.data.workspaceChanged).toBe(true);
    const q2 = one(r2, "clarification_required")!;
    expect(q2.question).toMatch(/больше нет/);
    expect(q2.candidates.map((c: Json) => c.identity)).toEqual(["composition-discount"]);
    expect(llm.count("answer")).toBe(0);
    expect((await interaction(server.url, q.interactionId)).planVersion).toBe(2);
  });

  it("a history reference resolves from an earlier turn", async () => {
    llm.script("answer", "Ок.");
    const { conv } = await ask("Покажи composition-alpha");
    llm.reset();
    llm.script(
      "planner",
      '{"tasks": [{"id": "task-1", "intent": "inspect_entity", "sourceMode": "conversation", "mentions": ["она"], "dependsOn": []}]}',
    );
    llm.script("answer", "В папке [[folder-sales]].");
    const r = await send(server.url, conv, { text: "А в какой папке она лежит?", workspace, debug: true });
    expect(stage(r, "06")!.data.tasks[0]).toMatchObject({
      status: "resolved",
      resolvedIdentity: "composition-alpha",
      resolvedBy: "conversation",
    });
    expect(one(r, "final")).toMatchObject({ validation: { ok: true }, modelCalls: { preparatory: 1, final: 1 } });
  });

  it("refuses a bad workspace and an unknown conversation with JSON errors", async () => {
    const conv = await newConversation(server.url);
    const bad = await send(server.url, conv, { text: "Покажи x", workspace: { documents: "nope" } });
    expect(bad.status).toBe(400);
    expect((bad.json as Json).error.code).toBe("invalid_request");
    const missing = await send(server.url, "no-such-conversation", { text: "Покажи x" });
    expect(missing.status).toBe(404);
    expect((await fetch(`${server.url}/v1/workbench/interactions/nope`)).status).toBe(404);
  });

  it("without a workspace in the body the bundled sample workspace and docs are used", async () => {
    llm.script("answer", "Ок.");
    const conv = await newConversation(server.url);
    const r = await send(server.url, conv, { text: "Объясни, как ответить на уточняющий вопрос", debug: true });
    expect(stage(r, "00")!.data.workspace.sample).toBe(true);
    expect(stage(r, "05")!.data.fragments[0].docId).toMatch(/^clarifications#/);
  });
});
