import { createServer, type Server } from "node:http";
import v8 from "node:v8";
import vm from "node:vm";
import type { Llm } from "../llm/client";
import type { Backend } from "./backends";
import type { Goal } from "./goals";
import { HttpClient, type SseEventLite } from "./http";
import { directLlm, instantFetch, instantLlm, type Script } from "./model";
import { bytes, ms, perSec, ratio, sleep, summarize } from "./stats";
import { startBenchServer, testTarget } from "./targets";
import { listenLoopback } from "./loopback";

/**
 * stream: N concurrent SSE runs, each relaying T tokens from the scripted model, through the
 * engine (HTTP → run → openai client → run events → SSE, events stored) and through a bare
 * Node relay of the same model stream (node:http, parse the chunks, write SSE, nothing else).
 *
 * Every stream sends its first token and then waits at a gate until all N are open: that
 * is when memory per open stream is read. The gate then opens and the remaining tokens go
 * as fast as each relay can take them: tokens/s, and the delay each token adds between the
 * model handing it out and the client reading it.
 */
export interface StreamBenchOptions {
  quick: boolean;
  log: (line: string) => void;
}

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

interface Gate {
  open: Promise<void>;
  release(): void;
}

function gate(): Gate {
  let release!: () => void;
  const open = new Promise<void>((r) => (release = r));
  return { open, release };
}

/** The model side of one measurement: per stream, when each token was handed out. */
class TokenSource {
  emitted = new Map<number, Float64Array>();
  constructor(
    readonly tokens: number,
    readonly g: Gate,
  ) {}

  script: Script = (role, req) => {
    if (role !== "answer") return "{}";
    const stream = Number(/s(\d+)/.exec(req.messages.at(-1)?.content ?? "")?.[1] ?? -1);
    const times = new Float64Array(this.tokens);
    this.emitted.set(stream, times);
    const { tokens, g } = this;
    return {
      tokens: (async function* () {
        for (let i = 0; i < tokens; i++) {
          if (i === 1) await g.open;
          times[i] = performance.now();
          yield `t${i} `;
        }
      })(),
    };
  };
}

interface Result {
  name: string;
  openMs: number;
  heapPerStream: number;
  rssPerStream: number;
  tokensPerSec: number;
  doneMs: number;
  delayP50: number;
  delayP99: number;
  failures: number;
}

async function measure(
  name: string,
  n: number,
  tokens: number,
  log: (l: string) => void,
  setup: (
    src: TokenSource,
  ) => Promise<{ post(i: number, onEvent: (e: SseEventLite) => void): Promise<string | null>; close(): Promise<void> }>,
): Promise<Result> {
  const g = gate();
  const src = new TokenSource(tokens, g);
  const target = await setup(src);
  try {
    const delays = new Float64Array(n * (tokens - 1));
    let delayCount = 0;
    let firsts = 0;
    let lastToken = 0;
    let failures = 0;
    gc();
    await sleep(50);
    const base = process.memoryUsage();
    const t0 = performance.now();
    // Clients arrive in waves of 50, 10 ms apart: a thousand connects in the same instant
    // would overflow the listen backlog and measure TCP retransmits instead of the relay.
    const runs = Array.from({ length: n }, (_, i) =>
      sleep(Math.floor(i / 50) * 10).then(() =>
        target
          .post(i, (e) => {
            if (e.event !== "token") return;
            const now = performance.now();
            const k = Number(/t(\d+)/.exec(e.data)?.[1] ?? -1);
            if (k === 0) firsts++;
            else if (k > 0) {
              const emitted = src.emitted.get(i)?.[k];
              if (emitted) delays[delayCount++] = now - emitted;
              lastToken = now;
            }
          })
          .then(
            (closing) => {
              if (closing !== "final") failures++;
            },
            (e: Error) => {
              if (++failures <= 3) log(`  ${name}: stream ${i} failed: ${e.message}`);
            },
          ),
      ),
    );
    const deadline = performance.now() + 120_000;
    while (firsts < n && performance.now() < deadline) await sleep(20);
    const openMs = performance.now() - t0;
    if (firsts < n) log(`  ${name}: only ${firsts}/${n} streams opened within the deadline`);
    gc();
    await sleep(50);
    const open = process.memoryUsage();
    const released = performance.now();
    g.release();
    await Promise.race([Promise.all(runs), sleep(180_000)]);
    const doneMs = performance.now() - released;
    const d = summarize(Array.from(delays.subarray(0, delayCount)));
    return {
      name,
      openMs,
      heapPerStream: (open.heapUsed - base.heapUsed) / n,
      rssPerStream: (open.rss - base.rss) / n,
      tokensPerSec: delayCount / ((lastToken - released) / 1000),
      doneMs,
      delayP50: d.p50,
      delayP99: d.p99,
      failures,
    };
  } finally {
    await target.close();
  }
}

/** The floor: node:http, the model's chat-completions stream parsed chunk by chunk and written as SSE. */
async function startBareRelay(script: Script): Promise<{ url: string; close(): Promise<void> }> {
  const model = instantFetch(script);
  const server: Server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    const { text } = JSON.parse(raw) as { text: string };
    const upstream = await model("http://model/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "bench-answer", stream: true, messages: [{ role: "user", content: text }] }),
    });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let id = 0;
    const send = (event: string, data: unknown) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\nid: ${++id}\n\n`);
    send("run_started", {});
    const reader = upstream.body!.getReader();
    const dec = new TextDecoder();
    let buf = "";
    let answer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
        const delta = (JSON.parse(line.slice(6)) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta
          ?.content;
        if (delta) {
          answer += delta;
          send("token", { delta });
        }
      }
    }
    send("final", { answer });
    send("done", {});
    res.end();
  });
  return listenLoopback(server);
}

export async function benchStream(backend: Backend, o: StreamBenchOptions): Promise<Goal[]> {
  const { log } = o;
  // --quick keeps the shape (many concurrent streams, a burst of tokens) at a twentieth of the size.
  const n = Number(process.env.BENCH_STREAMS ?? (o.quick ? 200 : 1000));
  const tokens = Number(process.env.BENCH_TOKENS ?? (o.quick ? 50 : 200));
  log(
    `stream — ${backend.name}: ${n} concurrent SSE runs × ${tokens} tokens (test dialogue route; events stored as the run goes)`,
  );

  const viaEngine = (llm: (script: Script) => Llm) => async (src: TokenSource) => {
    const s = await startBenchServer(backend.db, llm(src.script), "test");
    const t = testTarget(s.client);
    const ids: string[] = [];
    for (let i = 0; i < n; i += 50)
      ids.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => t.create()))));
    return {
      post: (i: number, onEvent: (e: SseEventLite) => void) =>
        s.client.sse(`/v1/test/conversations/${ids[i]}/messages`, { text: `s${i}` }, onEvent).then((r) => r.closing),
      close: () => s.close(),
    };
  };
  // Rounds of bare relay then engine, back to back, so each ratio compares two measurements
  // taken under the same load; the goal uses the median round. The bare relay goes first in a
  // round: an engine run leaves its events in the run hub for a while (late followers), and a
  // fuller heap would slow whatever is measured after it.
  const bareRelay = async (src: TokenSource) => {
    const relay = await startBareRelay(src.script);
    const client = new HttpClient(relay.url);
    return {
      post: (i: number, onEvent: (e: SseEventLite) => void) =>
        client.sse("/", { text: `s${i}` }, onEvent).then((r) => r.closing),
      async close() {
        client.close();
        await relay.close();
      },
    };
  };
  const rounds = o.quick ? 1 : 2;
  const results: Result[] = [];
  const ratios: number[] = [];
  let failures = 0;
  for (let r = 0; r < rounds; r++) {
    const bare = await measure(`bare relay${rounds > 1 ? ` #${r + 1}` : ""}`, n, tokens, log, bareRelay);
    const engine = await measure(`engine${rounds > 1 ? ` #${r + 1}` : ""}`, n, tokens, log, viaEngine(instantLlm));
    results.push(bare, engine);
    ratios.push(engine.tokensPerSec / bare.tokensPerSec);
    failures += engine.failures;
    // The same engine with the model handed over directly, no openai client: the client's share.
    if (r === 0 && !o.quick) results.push(await measure("engine, no client", n, tokens, log, viaEngine(directLlm)));
  }

  log(
    `  ${"".padEnd(18)} ${"open all".padStart(9)} ${"heap/stream".padStart(12)} ${"rss/stream".padStart(11)} ${"tokens/s".padStart(10)} ${"delay p50".padStart(10)} ${"delay p99".padStart(10)} ${"all done".padStart(9)}`,
  );
  for (const r of results) {
    log(
      `  ${r.name.padEnd(18)} ${ms(r.openMs).padStart(9)} ${bytes(r.heapPerStream).padStart(12)} ${bytes(r.rssPerStream).padStart(11)} ${perSec(r.tokensPerSec).padStart(10)} ${ms(r.delayP50).padStart(10)} ${ms(r.delayP99).padStart(10)} ${ms(r.doneMs).padStart(9)}${r.failures ? `  ${r.failures} run(s) did not end with final` : ""}`,
    );
  }
  const tputRatio = [...ratios].sort((x, y) => x - y)[Math.floor((ratios.length - 1) / 2)]!;
  const [bare, engine] = results as [Result, Result];
  log(
    `  ratios vs bare relay: tokens/s ${ratios.map(ratio).join(", ")} by round (median ${ratio(tputRatio)}); round 1: added delay p99 ${ms(engine.delayP99 - bare.delayP99)} per token, memory per open stream +${bytes(engine.heapPerStream - bare.heapPerStream)} heap, +${bytes(engine.rssPerStream - bare.rssPerStream)} RSS`,
  );
  return [
    {
      name: `stream.${backend.name}.tokens`,
      ratio: tputRatio,
      goal: "≥ 0.5× bare relay",
      ok: tputRatio >= 0.5 && failures === 0,
    },
  ];
}
