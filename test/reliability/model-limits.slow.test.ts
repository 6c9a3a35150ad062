import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MODEL_UNAVAILABLE_REPLY } from "../../systems/clinic/templates";
import { onServer } from "../utils/db";
import type { ScriptStep } from "../utils/scripted-llm";
import { eventsNamed, postSse } from "../utils/sse";
import { useServerProcesses } from "./processes";
import { clinicApi } from "../utils/clinic-api";

/**
 * A model that never stops talking, against a real server process (issue 18 items 1 and 4):
 * a 10 MB reply in 4 KB chunks, 1 MB in token-sized chunks and an endless stream each end the
 * turn cleanly within seconds (the fixed model_unavailable reply, then done; nothing stored),
 * the process's peak RSS stays bounded, and the same process goes on serving turns.
 */
const backend = onServer ? "PostgreSQL server" : "file-backed PGlite";
const CAP = 64 * 1024;
const DEADLINE_MS = 1_500;

/** Peak and current resident memory of a process, in MB (Linux /proc). */
function memory(pid: number): { peakMb: number; rssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(status.match(new RegExp(`${field}:\\s+(\\d+) kB`))![1]);
  return { peakMb: kb("VmHWM") / 1024, rssMb: kb("VmRSS") / 1024 };
}

// The cap is the default (64k); the branch alone gets a short total deadline.
const fx = useServerProcesses({ LLM_TOTAL_TIMEOUT_MS_BRANCH: String(DEADLINE_MS) });
const llm = fx.llm;

type Thread = { messages: { role: string; text: string }[] };
const thread = async (id: string) => (await (await fetch(`${fx.server.url}/v1/clinic/threads/${id}`)).json()) as Thread;

async function turn(id: string, text: string, branch: ScriptStep) {
  llm.script("router", "general_info");
  llm.script("branch", branch);
  const started = Date.now();
  const r = await postSse(`${fx.server.url}/v1/clinic/threads/${id}/messages`, { text });
  return { r, ms: Date.now() - started };
}

/** A thread with one good turn, so "nothing stored" has something to compare with. */
async function threadWithOneTurn() {
  const id = await clinicApi(fx.server.url).newThread();
  const first = await turn(id, "Добрый день", "Здравствуйте!");
  expect(eventsNamed(first.r, "final")[0]).toMatchObject({ reply: "Здравствуйте!" });
  return { id, before: await thread(id) };
}

async function expectCleanEnd(x: Awaited<ReturnType<typeof turn>>, id: string, before: Thread) {
  expect(x.r.status).toBe(200);
  expect(x.r.events.at(-1)!.event).toBe("done");
  expect(eventsNamed(x.r, "final")[0]).toMatchObject({ reply: MODEL_UNAVAILABLE_REPLY, events: ["model_unavailable"] });
  const streamed = eventsNamed(x.r, "token").reduce((n, t) => n + String(t.delta).length, 0);
  expect(streamed).toBeLessThanOrEqual(CAP);
  expect(await thread(id)).toEqual(before);
  // One call: a limit of ours is never retried.
  expect(llm.count("branch")).toBe(1);
}

/** The process still answers a normal turn. */
async function stillServing() {
  llm.reset();
  const { id } = await threadWithOneTurn();
  expect((await thread(id)).messages).toHaveLength(2);
}

describe(`model replies past the limits (${backend}, server process)`, () => {
  const cases = [
    {
      name: "10 MB in 4 KB chunks: cut at the cap in seconds, nothing stored, RSS bounded",
      content: "Очень длинный ответ. ".repeat(500_000).slice(0, 10_000_000),
      chunkChars: 4096,
      maxMs: 10_000,
    },
    {
      name: "1 MB in token-sized chunks: cut at the cap in seconds (no quadratic work), nothing stored",
      content: "слово ".repeat(200_000).slice(0, 1_000_000),
      chunkChars: 4,
      maxMs: 15_000,
    },
  ];
  for (const c of cases)
    it(c.name, async () => {
      const { id, before } = await threadWithOneTurn();
      const base = memory(fx.server.child.pid!);
      llm.reset();
      const x = await turn(id, "Расскажите всё", { content: c.content, chunkChars: c.chunkChars });
      await expectCleanEnd(x, id, before);
      expect(x.ms).toBeLessThan(c.maxMs);
      expect(memory(fx.server.child.pid!).peakMb - base.peakMb).toBeLessThan(150);
      await stillServing();
    });

  it("an endless stream of small tokens (never idle): ended at the total deadline, nothing stored", async () => {
    const { id, before } = await threadWithOneTurn();
    llm.reset();
    const x = await turn(id, "Расскажите всё", { content: "и ещё ", endless: true, chunkDelayMs: 5 });
    await expectCleanEnd(x, id, before);
    // Tokens kept coming (the idle timer never fired) until the deadline, not the cap, ended it.
    expect(eventsNamed(x.r, "token").length).toBeGreaterThan(10);
    expect(x.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    expect(x.ms).toBeLessThan(DEADLINE_MS + 3_000);
    expect(fx.server.output()).not.toMatch(/heap out of memory/);
    await stillServing();
  });
});
