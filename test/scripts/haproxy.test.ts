import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/procs";
import { haproxyConfig, startHaproxy, type Haproxy } from "../../scripts/haproxy";
import { ensureHaproxy } from "../utils/haproxy";

/**
 * scripts/haproxy.ts against plain node:http upstreams that answer with their own index:
 * one conversation's requests land on one upstream (thread, inbox and run-follower routes alike),
 * conversations spread over all of them, requests without a conversation go round robin, and
 * after an upstream dies its conversations are served by a survivor.
 */
const missing = ensureHaproxy();
if (missing) console.warn(`test/scripts/haproxy.test.ts skipped: ${missing}`);
let proxy: Haproxy;
const upstreams: Server[] = [];

async function upstream(i: number): Promise<string> {
  const port = await freePort();
  const s = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(req.url === "/readyz" ? "ready" : String(i));
  });
  await new Promise<void>((r) => s.listen(port, "127.0.0.1", () => r()));
  upstreams.push(s);
  return `http://127.0.0.1:${port}`;
}

const servedBy = async (path: string, headers: Record<string, string> = {}) =>
  Number(await (await fetch(`${proxy.url}${path}`, { headers })).text());

it("deploy/haproxy.cfg is the generated config (its header says how)", () => {
  const file = readFileSync("deploy/haproxy.cfg", "utf8");
  const body = file.slice(file.indexOf("\n") + 1);
  const upstreams = ["http://app1:3000", "http://app2:3000", "http://app3:3000"];
  expect(body).toBe(haproxyConfig({ upstreams, port: 8080, host: "0.0.0.0" }));
});

describe.skipIf(missing !== null)("HAProxy in front of N processes (scripts/haproxy.ts)", () => {
  beforeAll(async () => {
    const urls = [await upstream(0), await upstream(1), await upstream(2)];
    proxy = await startHaproxy({ upstreams: urls, port: await freePort(), checkIntervalMs: 200, servedByHeader: true });
  });
  afterAll(async () => {
    await proxy?.close();
    for (const s of upstreams) s.close();
  });

  it("keeps a conversation on one process and spreads conversations over all", async () => {
    const first = new Map<string, number>();
    for (let c = 0; c < 30; c++) {
      const id = `conv-${c}`;
      const a = await servedBy(`/v1/clinic/threads/${id}/messages`);
      const b = await servedBy(`/v1/clinic/threads/${id}`);
      const d = await servedBy(`/v1/clinic/threads/${id}/messages?after=3`);
      const operator = await servedBy(`/v1/inbox/conversations/${id}/take`);
      const replay = await servedBy(`/v1/conversations/${id}/replay`);
      const follower = await servedBy(`/v1/runs/run-of-${id}/events`, { "x-conversation-id": id });
      expect([b, d, operator, replay, follower]).toEqual([a, a, a, a, a]);
      first.set(id, a);
    }
    expect(new Set(first.values()).size).toBe(3);
  });

  it("sends requests without a conversation round robin, names the server and counts per server", async () => {
    const before = await proxy.stats();
    const created = await Promise.all(Array.from({ length: 6 }, () => servedBy("/v1/clinic/threads")));
    expect(new Set(created).size).toBe(3);
    const res = await fetch(`${proxy.url}/v1/clinic/threads/conv-0`);
    expect(res.headers.get("x-served-by")).toBe(`app${Number(await res.text()) + 1}`);
    const after = await proxy.stats();
    expect(after.map((s) => [s.name, s.status])).toEqual([
      ["app1", "UP"],
      ["app2", "UP"],
      ["app3", "UP"],
    ]);
    expect(after.reduce((a, s, i) => a + s.sessions - before[i]!.sessions, 0)).toBe(7);
  });

  it("serves a dead process's conversations from a survivor", async () => {
    const id = "conv-survivor";
    const owner = await servedBy(`/v1/clinic/threads/${id}/messages`);
    upstreams[owner]!.closeAllConnections();
    await new Promise<void>((r) => upstreams[owner]!.close(() => r()));
    // Health checks every 200 ms, two failures take it out; redispatch covers the gap meanwhile.
    await new Promise((r) => setTimeout(r, 800));
    const now = await servedBy(`/v1/clinic/threads/${id}/messages`);
    expect(now).not.toBe(owner);
    expect(await servedBy(`/v1/clinic/threads/${id}`)).toBe(now);
    expect((await proxy.stats())[owner]!.status).toBe("DOWN");
  });
});
