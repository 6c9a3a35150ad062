import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startRoundRobinProxy, type RoundRobinProxy } from "../../scripts/round-robin-proxy";
import { freePort } from "../reliability/processes";

/**
 * scripts/round-robin-proxy.ts against plain node:http upstreams: turn order, headers both ways,
 * SSE relayed as it is written (not when it ends), a dead upstream skipped, a client that leaves
 * passed on. The real-server behaviour behind it is test/reliability/scale-out.slow.test.ts.
 */
interface Upstream {
  url: string;
  server: Server;
  seen: { path: string; headers: IncomingHttpHeaders; body: string }[];
  /** Resolves when a request's response closed before it ended (the client went away). */
  aborted: Promise<void>;
  /** Lets a held SSE response write its last event and end. */
  release(): void;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

async function upstream(name: string): Promise<Upstream> {
  const seen: Upstream["seen"] = [];
  let onAbort!: () => void;
  const aborted = new Promise<void>((r) => (onAbort = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    seen.push({ path: req.url!, headers: req.headers, body });
    if (req.url === "/sse") {
      res.writeHead(200, { "content-type": "text/event-stream", "x-run-id": `run-${name}` });
      res.write(`id: 1\nevent: token\ndata: {"from":"${name}"}\n\n`);
      res.on("close", () => {
        if (!res.writableEnded) onAbort();
      });
      await released;
      if (!res.destroyed) res.end(`id: 2\nevent: done\ndata: {}\n\n`);
      return;
    }
    // `x-hop` is named in Connection: a header for this hop only, which a proxy must not pass on.
    res.writeHead(200, {
      "content-type": "application/json",
      connection: "keep-alive, x-hop",
      "x-hop": "1",
      "x-served": name,
    });
    res.end(JSON.stringify({ name }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const a = server.address();
  const port = typeof a === "object" && a ? a.port : 0;
  open.push({
    close: () =>
      new Promise<void>((r) => {
        release();
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
  return { url: `http://127.0.0.1:${port}`, server, seen, aborted, release };
}

async function proxyOver(upstreams: string[]): Promise<RoundRobinProxy> {
  const p = await startRoundRobinProxy({ upstreams });
  open.unshift(p);
  return p;
}

describe("round-robin proxy", () => {
  it("sends requests to the upstreams in turn and passes end-to-end headers both ways, hop-by-hop ones not", async () => {
    const [a, b] = [await upstream("a"), await upstream("b")];
    const p = await proxyOver([a.url, b.url]);
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${p.url}/v1/x?i=${i}`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": `k-${i}`, "last-event-id": "7" },
        body: JSON.stringify({ text: `привет ${i}` }),
      });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-upstream")).toBe(String(i % 2));
      names.push(r.headers.get("x-served")!);
      expect(r.headers.get("x-hop")).toBeNull();
      expect(((await r.json()) as { name: string }).name).toBe(names.at(-1));
    }
    expect(names).toEqual(["a", "b", "a", "b"]);
    expect(p.counts()).toEqual([2, 2]);
    const first = a.seen[0]!;
    expect(first.path).toBe("/v1/x?i=0");
    expect(first.body).toBe(JSON.stringify({ text: "привет 0" }));
    expect(first.headers["idempotency-key"]).toBe("k-0");
    expect(first.headers["last-event-id"]).toBe("7");
    expect(first.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(b.seen.map((s) => s.headers["idempotency-key"])).toEqual(["k-1", "k-3"]);
  });

  it("relays an SSE event as soon as the upstream writes it, and the end when it ends", async () => {
    const a = await upstream("a");
    const p = await proxyOver([a.url]);
    const res = await fetch(`${p.url}/sse`, { method: "POST", body: "{}" });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("x-run-id")).toBe("run-a");
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    // The upstream holds the response open: this first event can only come from an unbuffered relay.
    let text = dec.decode((await reader.read()).value);
    expect(text).toContain("event: token");
    expect(text).not.toContain("event: done");
    a.release();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
    expect(text).toContain("event: done");
  });

  it("a client that leaves mid-stream closes the upstream response too", async () => {
    const a = await upstream("a");
    const p = await proxyOver([a.url]);
    const ac = new AbortController();
    const res = await fetch(`${p.url}/sse`, { method: "POST", body: "{}", signal: ac.signal });
    await res.body!.getReader().read();
    ac.abort();
    await expect(
      Promise.race([a.aborted.then(() => "aborted"), new Promise((r) => setTimeout(() => r("still open"), 5_000))]),
    ).resolves.toBe("aborted");
  });

  it("skips an upstream that refuses connections and re-sends the request to the next one", async () => {
    const a = await upstream("a");
    const dead = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const p = await proxyOver([dead, a.url]);
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${p.url}/v1/y`, { method: "POST", body: `{"i":${i}}` });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-upstream")).toBe("1");
    }
    expect(a.seen.map((s) => s.body)).toEqual(['{"i":0}', '{"i":1}', '{"i":2}']);
    expect(p.counts()).toEqual([0, 3]);
  });

  it("answers 502 when no upstream is reachable", async () => {
    const p = await proxyOver([`http://127.0.0.1:${await freePort()}`]);
    const r = await fetch(`${p.url}/v1/z`);
    expect(r.status).toBe(502);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("bad_gateway");
  });
});
