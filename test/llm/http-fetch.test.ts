import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpFetch } from "../../llm/http-fetch";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let handler: Handler = (_req, res) => res.end();
let server: Server;
let base: string;
const remotePorts: number[] = [];
const closedRequests: string[] = [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    remotePorts.push(req.socket.remotePort!);
    res.on("close", () => {
      if (!res.writableFinished) closedRequests.push(req.url!);
    });
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    handler(req, res, Buffer.concat(parts).toString("utf8"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const f = createHttpFetch();
const tick = () => new Promise((r) => setTimeout(r, 20));

describe("node:http fetch", () => {
  it("sends method, headers and a string or byte body; returns status, statusText and every header value", async () => {
    let seen: { method?: string; type?: string; auth?: string; body?: string } = {};
    handler = (req, res, body) => {
      seen = { method: req.method, type: req.headers["content-type"], auth: req.headers.authorization, body };
      res.writeHead(201, "Made", [
        ["Set-Cookie", "a=1"],
        ["Set-Cookie", "b=2"],
        ["X-Multi", "one"],
        ["X-Multi", "two"],
        ["Content-Type", "application/json"],
      ]);
      res.end('{"ok":true}');
    };
    const headers = new Headers({ "content-type": "application/json", authorization: "Bearer k" });
    const r = await f(`${base}/v1/x`, { method: "post", headers, body: '{"q":"привет"}' });
    expect(seen).toEqual({ method: "POST", type: "application/json", auth: "Bearer k", body: '{"q":"привет"}' });
    expect(r.status).toBe(201);
    expect(r.statusText).toBe("Made");
    expect(r.ok).toBe(true);
    expect(r.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(r.headers.get("x-multi")).toBe("one, two");
    expect(await r.json()).toEqual({ ok: true });

    await f(`${base}/v1/y`, { method: "POST", headers: { "x-k": "v" }, body: new TextEncoder().encode("байты") });
    expect(seen.body).toBe("байты");

    // A plain object, lower-case (the SDK's reused headers, llm/sdk-headers.ts) or not: the same request.
    for (const h of [{ authorization: "Bearer p" }, { Authorization: "Bearer p" }] as Record<string, string>[]) {
      seen = {};
      await f(`${base}/v1/z`, { method: "POST", headers: h, body: "z" });
      expect(seen.auth).toBe("Bearer p");
    }
  });

  it("a status without a body gives a null body", async () => {
    handler = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    const r = await f(`${base}/none`, { method: "DELETE" });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
  });

  it("reuses one kept-alive socket for calls in sequence", async () => {
    handler = (_req, res) => res.end("ok");
    remotePorts.length = 0;
    for (let i = 0; i < 3; i++) expect(await (await f(`${base}/k`, { method: "POST", body: "x" })).text()).toBe("ok");
    expect(remotePorts).toHaveLength(3);
    expect(new Set(remotePorts).size).toBe(1);
  });

  it("a connection that cannot be made rejects with a TypeError, as fetch does", async () => {
    const spare = createServer();
    await new Promise<void>((r) => spare.listen(0, "127.0.0.1", r));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((r) => spare.close(() => r()));
    const e = await f(`http://127.0.0.1:${port}/v1`, { method: "POST", body: "{}" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TypeError);
    expect((e as TypeError & { cause: { code: string } }).cause.code).toBe("ECONNREFUSED");
  });

  it("an abort before the headers rejects with an AbortError and closes the request", async () => {
    handler = () => {}; // never answers
    closedRequests.length = 0;
    const ac = new AbortController();
    const p = f(`${base}/slow`, { method: "POST", body: "{}", signal: ac.signal });
    await tick();
    ac.abort();
    const e = await p.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DOMException);
    expect((e as DOMException).name).toBe("AbortError");
    await tick();
    expect(closedRequests).toEqual(["/slow"]);
    // An already aborted signal sends nothing.
    await expect(f(`${base}/never`, { signal: ac.signal })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("an abort mid-body errors the body with an AbortError", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: 1\n\n");
    };
    closedRequests.length = 0;
    const ac = new AbortController();
    const r = await f(`${base}/stream`, { method: "POST", body: "{}", signal: ac.signal });
    const reader = r.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 1\n\n");
    const next = reader.read();
    ac.abort();
    await expect(next).rejects.toMatchObject({ name: "AbortError" });
    await tick();
    expect(closedRequests).toEqual(["/stream"]);
  });

  it("a socket broken mid-body errors the body with a TypeError", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: 1\n\n");
      setTimeout(() => res.socket!.destroy(), 20);
    };
    const r = await f(`${base}/cut`, { method: "POST", body: "{}" });
    const reader = r.body!.getReader();
    await reader.read();
    const e = await reader.read().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TypeError);
  });

  it("a body longer than the stream's buffer arrives whole (the socket is paused and resumed)", async () => {
    const big = "я".repeat(200_000);
    handler = (_req, res) => res.end(big);
    const r = await f(`${base}/big`);
    expect(await r.text()).toBe(big);
  });

  it("follows a 307 with the same method and body, a 303 as a GET", async () => {
    const seen: string[] = [];
    handler = (req, res, body) => {
      seen.push(`${req.method} ${req.url} ${body}`);
      if (req.url === "/a") return res.writeHead(307, { location: "/b" }).end();
      if (req.url === "/b") return res.writeHead(303, { location: `${base}/c` }).end();
      res.end("done");
    };
    const r = await f(`${base}/a`, { method: "POST", body: "x" });
    expect(await r.text()).toBe("done");
    expect(seen).toEqual(["POST /a x", "POST /b x", "GET /c "]);
  });
});
