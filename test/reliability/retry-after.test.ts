import { describe, expect, it } from "vitest";
import { MODEL_UNAVAILABLE_REPLY } from "../../systems/clinic/templates";
import { onServer } from "../utils/db";
import { eventsNamed, postSse } from "../utils/sse";
import { useServerProcesses } from "./processes";
import { clinicApi } from "../utils/clinic-api";

/**
 * A rate-limited provider (429 with Retry-After) under a real server process: the one retry
 * waits what the provider asked, and a wait past the role's total deadline fails the call at
 * once (the clinic's fixed model_unavailable reply) instead of sleeping past the deadline.
 */
const backend = onServer ? "PostgreSQL server" : "file-backed PGlite";

// The branch role may take 5 s in all, retry pause included.
const fx = useServerProcesses({ LLM_TOTAL_TIMEOUT_MS_BRANCH: "5000" });
const llm = fx.llm;

async function clinicTurn(text: string) {
  const id = await clinicApi(fx.server.url).newThread();
  const started = Date.now();
  const r = await postSse(`${fx.server.url}/v1/clinic/threads/${id}/messages`, { text });
  return { r, ms: Date.now() - started };
}

const branchGap = () => {
  const calls = llm.calls.filter((c) => c.role === "branch");
  expect(calls).toHaveLength(2);
  return calls[1]!.at - calls[0]!.at;
};

describe(`Retry-After on 429 (real server process, ${backend})`, () => {
  const cases: {
    name: string;
    headers: Record<string, string>;
    text: string;
    reply: string;
    said: string;
    gap: [number, number];
  }[] = [
    {
      name: "retry-after: 2 → the retry comes after ≈ 2 s and the turn answers",
      headers: { "retry-after": "2" },
      text: "Сколько стоит приём?",
      reply: "Первичный приём стоит 2000 рублей.",
      said: "retry-after 2 s",
      gap: [1_980, 2_800],
    },
    {
      name: "retry-after-ms: 700 → the retry comes after ≈ 0.7 s",
      headers: { "retry-after-ms": "700" },
      text: "Можно записаться?",
      reply: "Запись открыта.",
      said: "retry-after-ms 700",
      gap: [680, 1_500],
    },
  ];
  for (const c of cases)
    it(c.name, async () => {
      llm.reset();
      llm.script("router", "general_info");
      llm.script("branch", { status: 429, headers: c.headers }, c.reply);
      const { r } = await clinicTurn(c.text);
      expect(r.events.at(-1)?.event).toBe("done");
      expect(eventsNamed(r, "final")[0]).toMatchObject({ reply: c.reply });
      const gap = branchGap();
      console.log(`${c.said}: the retry came ${gap} ms after the 429`);
      expect(gap).toBeGreaterThanOrEqual(c.gap[0]);
      expect(gap).toBeLessThan(c.gap[1]);
    });

  it("retry-after longer than the role's deadline (30 s > 5 s) → fails at once, no retry, fixed reply", async () => {
    llm.reset();
    llm.script("router", "general_info");
    llm.script("branch", { status: 429, headers: { "retry-after": "30" } }, "Не должно прийти.");
    const { r, ms } = await clinicTurn("Сколько стоит анализ?");
    console.log(`retry-after 30 s past a 5 s deadline: the turn ended in ${ms} ms`);
    expect(r.events.at(-1)?.event).toBe("done");
    expect(eventsNamed(r, "final")[0]).toMatchObject({ reply: MODEL_UNAVAILABLE_REPLY, events: ["model_unavailable"] });
    expect(llm.count("branch")).toBe(1);
    expect(ms).toBeLessThan(2_000);
  });
});
