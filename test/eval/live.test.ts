import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../eval/run";
import { startScriptedLlm, type ScriptedLlm } from "../utils/scripted-llm";

/**
 * `npm run eval -- --live` end to end against an OpenAI-compatible server (the scripted one stands
 * in for a real endpoint): the eval forwards every role's calls to it, measures what came back,
 * records it, and the recording replays as a scripted run with the same results.
 */

const CASES = "^(cl-happy-path-fast-intro|wb-tr-ambiguous-versions-clarify|wb-tr-exact-identity)$";

// The eval always runs on its own embedded database, so the PostgreSQL-server pass of CI would only repeat it.
describe.skipIf(!!process.env.DATABASE_URL)("eval --live", () => {
  let llm: ScriptedLlm;
  let dir: string;
  const env = () => ({
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: "live-key",
    LLM_MODEL: "test-answer",
    ...Object.fromEntries(
      ["router", "branch", "planner", "reranker", "classifier", "answer"].map((r) => [
        `LLM_MODEL_${r.toUpperCase()}`,
        `test-${r}`,
      ]),
    ),
  });
  const quiet = () => {};

  beforeAll(async () => {
    llm = await startScriptedLlm();
    dir = mkdtempSync(join(tmpdir(), "eval-live-"));
  });
  afterAll(async () => {
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("measures the endpoint's answers, records them, and replays them identically", { timeout: 120_000 }, async () => {
    // The "real model": right on every turn but one router decision.
    llm.script("router", "new_booking", "new_booking", "price_question");
    llm.script(
      "branch",
      'Игорь Петрович, давно скачет давление?\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {"name": "Игорь Петрович", "specialist": "кардиолог", "reason": "скачет давление"}}',
      'Вас примет кардиолог, 45 минут.\nSTATE_JSON: {"state_after": "present", "slots_updated": {}}',
      'Когда вам удобно?\nSTATE_JSON: {"state_after": "offer_time", "slots_updated": {}}',
    );
    llm.script("reranker", '{"choice": "clarify"}');
    llm.script("answer", "Композиция [[cmp.discount-approval]] согласует скидку больше 15%.");
    const recording = join(dir, "live.json");

    const live = await main(
      ["--live", "--filter", CASES, "--record", recording, "--out", join(dir, "live")],
      env(),
      quiet,
    );
    expect(live.code).toBe(0);
    const rep = live.reports[0]!;
    expect(rep.mode).toBe("live");
    // Every model call went to the endpoint, with the role's model name.
    expect(llm.count("router")).toBe(3);
    expect(llm.count("branch")).toBe(3);
    expect(llm.count("reranker")).toBe(1);
    expect(llm.calls.map((c) => c.model)).toContain("test-router");
    // The wrong router decision is measured as such; the rest of the dialogue is right.
    expect(rep.clinic!.router).toMatchObject({ n: 3, ok: 2 });
    expect(rep.clinic!.step.value).toBe(1);
    expect(rep.clinic!.stages.router.accuracy).toMatchObject({ n: 3, ok: 2 });
    expect(rep.workbench!.turnPass.value).toBe(1);
    expect(rep.workbench!.stages.reranker.accuracy).toMatchObject({ n: 1, ok: 1 });
    expect(rep.workbench!.roles.answer!.calls).toBe(1);

    const rec = JSON.parse(readFileSync(recording, "utf8")) as {
      endpoint: string;
      turns: Record<string, Record<string, string[]>>;
    };
    expect(rec.endpoint).toBe(llm.baseURL);
    expect(rec.turns["clinic/cl-happy-path-fast-intro/2"]!.router).toEqual(["price_question"]);
    expect(rec.turns["workbench/wb-tr-ambiguous-versions-clarify/0"]!.reranker).toEqual(['{"choice": "clarify"}']);

    const before = llm.count();
    const replay = await main(["--replay", recording, "--filter", CASES, "--out", join(dir, "replay")], {}, quiet);
    expect(llm.count()).toBe(before); // nothing reached the endpoint
    const again = replay.reports[0]!;
    expect(again.mode).toBe("replay");
    expect(again.clinic!.router).toEqual(rep.clinic!.router);
    expect(again.clinic!.passingCases).toEqual(rep.clinic!.passingCases);
    expect(again.workbench!.passingCases).toEqual(rep.workbench!.passingCases);
    expect(again.workbench!.clarification).toEqual(rep.workbench!.clarification);
  });

  it("refuses --live without an endpoint", async () => {
    await expect(main(["--live", "--filter", CASES], {}, quiet)).rejects.toThrow(/OPENAI_BASE_URL/);
  });
});
