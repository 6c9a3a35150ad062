import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/procs";
import { HAPROXY_BIN, startHaproxy, type Haproxy } from "../../scripts/haproxy";

/**
 * scripts/haproxy.ts against plain node:http upstreams that answer with their own index:
 * one conversation's requests land on one upstream, conversations spread over all of them,
 * and after an upstream dies its conversations are served by a survivor.
 */
const installed = existsSync(HAPROXY_BIN);
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

const servedBy = async (path: string) => Number(await (await fetch(`${proxy.url}${path}`)).text());

describe.runIf(installed)("HAProxy in front of N processes (scripts/haproxy.ts)", () => {
  beforeAll(async () => {
    const urls = [await upstream(0), await upstream(1), await upstream(2)];
    proxy = await startHaproxy({ upstreams: urls, port: await freePort(), checkIntervalMs: 200 });
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
      expect([b, d]).toEqual([a, a]);
      first.set(id, a);
    }
    expect(new Set(first.values()).size).toBe(3);
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
  });
});
