import { spawn, type ChildProcess } from "node:child_process";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { onServer } from "../utils/db";
import { useTestServer } from "../utils/server";

/**
 * Issue 47: an idle thread follower costs at most 20 KB of the server's memory. FOLLOWERS
 * followers are opened from a child process (raw sockets: the clients' own objects stay out of
 * this process), and the server's JavaScript heap plus its external memory (buffers) after a
 * full collection is compared with the same before them. What this cannot see — the kernel's
 * socket buffers and libuv's handle per connection — bench/idle-followers.ts adds by RSS.
 */
const FOLLOWERS = 500;
const LIMIT_BYTES = 20 * 1024;
const server = useTestServer({ env: { RUN_SWEEP_MS: "600000", RUN_STALE_MS: "15000" } });
let clients: ChildProcess | null = null;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

// Declared after useTestServer, so it runs before the server stops (after-hooks run in reverse).
afterAll(() => {
  clients?.kill("SIGKILL");
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The heap and the buffers outside it after two full collections, bytes. */
async function retained(): Promise<number> {
  for (let i = 0; i < 2; i++) {
    gc();
    await sleep(50);
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Opens `n` followers spread over `threads` from a child process; resolves once each has its headers. */
function openFollowers(url: string, threads: string[], n: number): Promise<ChildProcess> {
  const { port } = new URL(url);
  const script = `
    const net = require("node:net");
    const threads = ${JSON.stringify(threads)};
    let ready = 0;
    for (let i = 0; i < ${n}; i++) {
      const s = net.connect(${port}, "127.0.0.1", () => s.write(
        "GET /v1/clinic/threads/" + threads[i % threads.length] + "/events HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\naccept: text/event-stream\\r\\n\\r\\n"));
      let seen = false;
      s.on("data", () => { if (!seen) { seen = true; if (++ready === ${n}) console.log("ready"); } });
      s.on("error", (e) => { console.error(String(e)); process.exit(1); });
    }`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d) => String(d).includes("ready") && resolve(child));
    child.once("exit", (code) => reject(new Error(`followers' process exited ${code}`)));
  });
}

describe(`${FOLLOWERS} idle thread followers' memory (${onServer ? "PostgreSQL server" : "PGlite"})`, () => {
  it(`cost the server at most ${LIMIT_BYTES / 1024} KB each`, async () => {
    const threads: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${server.url}/v1/clinic/threads`, { method: "POST" });
      threads.push(((await r.json()) as { threadId: string }).threadId);
    }
    // Warm every path a follower takes (code, caches, the LISTEN connection) before measuring.
    const warm = await openFollowers(server.url, threads, 20);
    while (server.deps.waker.waiting < 20) await sleep(20);
    warm.kill("SIGKILL");
    while (server.deps.waker.waiting > 0) await sleep(20);

    const before = await retained();
    clients = await openFollowers(server.url, threads, FOLLOWERS);
    while (server.deps.waker.waiting < FOLLOWERS) await sleep(20);
    await sleep(200);
    const after = await retained();
    const each = (after - before) / FOLLOWERS;
    console.log(`${FOLLOWERS} idle followers: ${(each / 1024).toFixed(1)} KB each (heap + external, after GC)`);
    expect(each).toBeGreaterThan(0);
    expect(each).toBeLessThanOrEqual(LIMIT_BYTES);
  }, 120_000);
});
