import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { eventsNamed, postSse } from "../utils/sse";
import { newConversation, one, send, stage } from "../systems/workbench/http-workbench-helpers";
import { clinicApi } from "../utils/clinic-api";

/**
 * The stage switches of driver/stage-switches.ts, read where each stage is gated: a switched-off
 * stage makes no model call and the request takes the seed's deterministic path.
 */

const workspace = JSON.parse(
  readFileSync(new URL("../../eval/datasets/workspaces/trade.json", import.meta.url), "utf8"),
) as unknown;
const SWITCHES = ["WORKBENCH_PLANNER", "WORKBENCH_RERANKER", "WORKBENCH_CLASSIFIER", "CLINIC_ROUTER_HINT"];

const server = useTestServer({ llm: true });
const llm = server.llm;
afterEach(() => {
  for (const k of SWITCHES) delete process.env[k];
  llm.reset();
});

const ask = async (text: string, extra: Record<string, unknown> = {}, conv?: string) => {
  const id = conv ?? (await newConversation(server.url));
  return { id, r: await send(server.url, id, { text, workspace, debug: true, ...extra }) };
};

describe("stage switches", () => {
  it("WORKBENCH_RERANKER=off: close candidates are asked about, not ranked", async () => {
    llm.script("reranker", '{"choice": "c1"}');
    const on = await ask("Покажи «Счёт на оплату»");
    expect(llm.count("reranker")).toBe(1);
    expect(one(on.r, "final")).toBeDefined();
    llm.reset();
    process.env.WORKBENCH_RERANKER = "off";
    const off = await ask("Покажи «Счёт на оплату»");
    expect(llm.count("reranker")).toBe(0);
    expect(one(off.r, "clarification_required")?.candidates).toHaveLength(2);
  });

  it("WORKBENCH_PLANNER=off: a compound request keeps its deterministic plan", async () => {
    process.env.WORKBENCH_PLANNER = "off";
    const { r } = await ask("Найди сущность «Отгрузка», затем покажи её");
    expect(llm.count("planner")).toBe(0);
    expect(stage(r, "03")?.data.plannedBy).toBe("deterministic");
    expect(one(r, "final")).toBeDefined();
  });

  it("WORKBENCH_CLASSIFIER=off: free text in reply to a question is treated as an answer (seed 000 fallback)", async () => {
    llm.script("reranker", '{"choice": "clarify"}');
    const first = await ask("Покажи «Счёт на оплату»");
    const clar = one(first.r, "clarification_required")!;
    process.env.WORKBENCH_CLASSIFIER = "off";
    const reply = await ask(
      "ну тот, что для экрана, наверное",
      { interactionId: clar.interactionId, replyToClarificationId: clar.id },
      first.id,
    );
    expect(llm.count("classifier")).toBe(0);
    expect(stage(reply.r, "07")?.data.reply).toMatchObject({ decidedBy: "classifier_off" });
  });

  it("CLINIC_ROUTER_HINT=off: a sticky branch is called without the [ПОДСКАЗКА РОУТЕРА] block", async () => {
    const thread = () => clinicApi(server.url).newThread();
    const turn = (id: string, text: string) => postSse(`${server.url}/v1/clinic/threads/${id}/messages`, { text });
    const branchPrompt = () => llm.calls.filter((c) => c.role === "branch").at(-1)!.messages[0]!.content;
    for (const hint of [true, false]) {
      if (!hint) process.env.CLINIC_ROUTER_HINT = "off";
      const id = await thread();
      llm.script("router", "new_booking", "price_question");
      llm.script(
        "branch",
        'Как вас зовут?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {}}',
        'Приём — 2300 рублей. Как вас зовут?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {}, "soft_insertion": true}',
      );
      await turn(id, "Хочу записаться к терапевту");
      const r = await turn(id, "А сколько стоит приём?");
      expect((eventsNamed(r, "final")[0] as { events: string[] }).events).toEqual(["sticky", "soft_insertion"]);
      expect(branchPrompt().includes("[ПОДСКАЗКА РОУТЕРА]")).toBe(hint);
      llm.reset();
    }
  });
});
