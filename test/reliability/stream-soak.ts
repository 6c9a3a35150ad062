import { createOpenAiLlm } from "../../llm/openai-client";
import { scriptedLlmConfig, startScriptedLlm } from "../utils/scripted-llm";

/**
 * Run as its own process (`node --expose-gc --import tsx`): `calls` streamed model calls, each
 * with its own caller signal as a turn has, against the scripted model server; prints the heap
 * after a full GC before and after them. Kept out of the test process so the heap measured is
 * the client's alone.
 */
const calls = Number(process.argv[2] ?? 3000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");

const server = await startScriptedLlm();
const llm = createOpenAiLlm({ ...scriptedLlmConfig(server), timeoutMs: 5_000 });
const messages = [{ role: "user" as const, content: "вопрос" }];

async function batch(n: number) {
  for (let i = 0; i < n; i++) {
    server.script("answer", "Короткий ответ модели из нескольких токенов.");
    const turn = new AbortController();
    let deltas = 0;
    const r = await llm.stream("answer", messages, { signal: turn.signal, onDelta: () => deltas++ });
    if (!r.ok || deltas === 0) throw new Error(`call ${i} failed: ${JSON.stringify(r)}`);
    // The recorded calls would grow the heap themselves.
    server.calls.length = 0;
  }
}

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((r) => setTimeout(r, 20));
  }
  return process.memoryUsage().heapUsed;
}

// Warm-up: connection pool, JIT, lazily built module state.
await batch(Math.min(500, calls));
const before = await settledHeap();
await batch(calls);
const after = await settledHeap();
await server.close();
console.log(JSON.stringify({ calls, before, after, perCallBytes: (after - before) / calls }));
process.exit(0);
