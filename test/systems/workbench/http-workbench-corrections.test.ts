// The clarification loop on the resolve side (issue 42): a correction naming a document of another
// type («не отчёт, а форму «…»») re-resolves with that type instead of offering the same candidates
// again, and one name given two types («форму и сущность «…»») resolves both — also with the
// planner and the classifier down (their calls fail: the deterministic paths decide).
import { beforeEach, describe, expect, it } from "vitest";
import { useTestServer } from "../../utils/server";
import { corpusWorkspace } from "./answer-corpus/workspace";
import { workspace } from "./fixtures";
import { interaction, newConversation, one, replyTo, send, stage, type Json } from "./http-workbench-helpers";

const server = useTestServer({ llm: true, env: { RUN_DETACH_GRACE_MS: "0" } });
const llm = server.llm;

beforeEach(() => llm.reset());

/** The planner, reranker and classifier answer 500 (twice: the client retries once). */
const modelsDown = () => {
  for (const role of ["planner", "reranker", "classifier"]) llm.script(role, { status: 500 }, { status: 500 });
};

const resolved = (r: Awaited<ReturnType<typeof send>>) =>
  ((stage(r, "06")?.data.tasks ?? []) as Json[]).map((x) => [x.entityType ?? x.type, x.status, x.resolvedIdentity]);

describe("workbench: corrections and coordinated types", () => {
  for (const down of [false, true])
    it(`«не отчёт, а форму «…»» re-resolves with the named type${down ? " (models down)" : ""}`, async () => {
      const conv = await newConversation(server.url);
      if (down) modelsDown();
      const r = await send(server.url, conv, { text: "Покажи отчёт «Заказ клиента»", workspace, debug: true });
      const q = one(r, "clarification_required")!;
      expect(q, JSON.stringify(r.events.map((e) => e.event))).toBeDefined();
      llm.reset();
      if (down) modelsDown();
      else llm.script("classifier", '{"kind": "correction"}');
      llm.script("answer", "Форма «Заказ клиента» [[form-order]].");
      const r2 = await replyTo(server.url, conv, q, "не отчёт, а форму «Заказ клиента»", workspace, { debug: true });
      expect(one(r2, "clarification_required"), "not the same question again").toBeUndefined();
      // taken from the offered list by its type, or the task re-resolved as a form: never the same question
      const updates = stage(r2, "07")!.data.reply.updates as Json[];
      const form = (q.candidates as Json[]).find((c) => c.identity === "form-order");
      expect([
        JSON.stringify([{ taskId: q.taskId, field: "resolvedEntity", candidateId: form?.candidateId }]),
        JSON.stringify([
          { taskId: q.taskId, field: "mention", value: "Заказ клиента" },
          { taskId: q.taskId, field: "entityType", value: "Form" },
        ]),
      ]).toContain(JSON.stringify(updates));
      expect(resolved(r2).map((x) => x[2])).toEqual(["form-order"]);
      expect(one(r2, "final")).toMatchObject({ status: "completed", entityCitations: ["form-order"] });
      const it2 = await interaction(server.url, q.interactionId);
      const task = it2.plan.tasks.find((x: Json) => x.id === q.taskId);
      expect(task.selection?.identity === "form-order" || task.entityType === "Form").toBe(true);
    });

  for (const down of [false, true])
    for (const text of ["Покажи форму и сущность «Заказ клиента»", "Покажи сущность и форму «Заказ клиента»"])
      it(`«${text}» resolves both documents${down ? " (planner down)" : ""}`, async () => {
        const conv = await newConversation(server.url);
        if (down) modelsDown();
        llm.script("answer", "Сущность [[entity-order]] и форма [[form-order]].");
        const r = await send(server.url, conv, { text, workspace, debug: true });
        expect(one(r, "clarification_required")).toBeUndefined();
        const tasks = resolved(r);
        expect(tasks.map((x) => x[2]).sort()).toEqual(["entity-order", "form-order"]);
        expect((one(r, "final")!.entityCitations as string[]).sort()).toEqual(["entity-order", "form-order"]);
      });

  // the held-out round: other phrasings over the corpus workspace (form and entity «Отгрузка», two
  // compositions «Стоимость доставки» — the current one and the 2023 archive)
  for (const down of [false, true]) {
    it(`a type-only correction keeps the name the task asked for${down ? " (models down)" : ""}`, async () => {
      const ask = async (first: string, reply: string) => {
        llm.reset();
        if (down) modelsDown();
        const conv = await newConversation(server.url);
        const r = await send(server.url, conv, { text: first, workspace: corpusWorkspace, debug: true });
        const q = one(r, "clarification_required")!;
        expect(q, first).toBeDefined();
        llm.reset();
        if (down) modelsDown();
        else llm.script("classifier", '{"kind": "correction"}');
        const r2 = await replyTo(server.url, conv, q, reply, corpusWorkspace, { debug: true });
        return { q, r2 };
      };
      const form = await ask("Покажи отчёт «Отгрузка»", "не отчёт, а форму");
      expect(resolved(form.r2).map((x) => x[2])).toEqual(["form-shipment"]);
      // two compositions bear the name: the question that follows is about them, not the form again
      const comp = await ask("Покажи форму «Стоимость доставки»", "не форму, а композицию");
      const q2 = one(comp.r2, "clarification_required")!;
      expect(q2.question).not.toBe(comp.q.question);
      expect(q2.question).toMatch(/композиц/);
      expect(resolved(comp.r2).map((x) => x[1])).toEqual(["ambiguous"]);
    });
    for (const text of [
      "Покажи и форму, и сущность «Отгрузка»",
      "Покажи форму, а также сущность «Отгрузка»",
      "Покажи сущность «Отгрузка» и форму",
    ])
      it(`«${text}» keeps both types${down ? " (planner down)" : ""}`, async () => {
        const conv = await newConversation(server.url);
        if (down) modelsDown();
        llm.script("answer", "Форма [[form-shipment]] и сущность [[entity-shipment]].");
        const r = await send(server.url, conv, { text, workspace: corpusWorkspace, debug: true });
        expect(one(r, "clarification_required")).toBeUndefined();
        expect(
          resolved(r)
            .map((x) => x[2])
            .sort(),
        ).toEqual(["entity-shipment", "form-shipment"]);
      });
  }

  it("a name given a type each («форму «…» и сущность «…»») keeps both types, even when the names are equal", async () => {
    const conv = await newConversation(server.url);
    modelsDown();
    llm.script("answer", "Форма [[form-order]] и сущность [[entity-order]].");
    const r = await send(server.url, conv, {
      text: "Покажи форму «Заказ клиента» и сущность «Заказ клиента»",
      workspace,
      debug: true,
    });
    expect(
      resolved(r)
        .map((x) => x[2])
        .sort(),
    ).toEqual(["entity-order", "form-order"]);
  });
});
