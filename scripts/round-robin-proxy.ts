import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { Socket } from "node:net";

/**
 * A small round-robin HTTP proxy for N server processes on one PostgreSQL database (README
 * "Scale-out"), with no dependency beyond node:http:
 *
 * - every request goes to the next upstream in turn — no stickiness: a run resumed with
 *   `Last-Event-ID` usually lands on another process, which follows the live run through
 *   LISTEN/NOTIFY (the gateway is stateless);
 * - responses are relayed chunk by chunk as they arrive (SSE is never buffered), request and
 *   response headers pass through (`Last-Event-ID`, `Idempotency-Key`, `X-Run-Id`, …) minus the
 *   hop-by-hop ones;
 * - a client that goes away aborts the upstream request, so the server sees the same disconnect
 *   it would see directly; an upstream that dies mid-response breaks the client's connection
 *   (no clean end is faked), and the client resumes by `Last-Event-ID` like after any drop;
 * - an upstream that refuses the connection (a dead process) is skipped for `downMs` and the
 *   request is sent to the next one: a refused connection never reached a server, so this is
 *   safe for any method. So is a reused keep-alive connection reset before any answer (the
 *   server closed it as idle). Nothing else is retried.
 *
 * `npx tsx scripts/round-robin-proxy.ts --port 8080 http://127.0.0.1:3001 http://127.0.0.1:3002`
 * (or `PORT` and `UPSTREAMS=url,url`). Request bodies are read whole before forwarding (they are
 * small JSON and a retry needs them); responses are streamed.
 */
export interface ProxyOptions {
  upstreams: string[];
  port?: number;
  host?: string;
  /** How long an upstream that refused a connection is skipped. */
  downMs?: number;
  /** Largest request body accepted (the gateway has its own, usually smaller, limit). */
  maxBodyBytes?: number;
}

export interface RoundRobinProxy {
  url: string;
  server: Server;
  /** Responses each upstream (by index) has answered: refused attempts are not counted. */
  counts(): number[];
  close(): Promise<void>;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own business on each connection.
const HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function endToEnd(h: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set(
    String(h.connection ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP.has(k) && !named.has(k)) out[k] = v;
  return out;
}

const REFUSED = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH"]);

export async function startRoundRobinProxy(o: ProxyOptions): Promise<RoundRobinProxy> {
  if (o.upstreams.length === 0) throw new Error("round-robin proxy: no upstreams");
  const ups = o.upstreams.map((u) => {
    const url = new URL(u);
    return { host: url.hostname, port: Number(url.port || 80), downUntil: 0, answered: 0 };
  });
  const downMs = o.downMs ?? 2_000;
  const maxBody = o.maxBodyBytes ?? 64 * 1024 * 1024;
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });
  let next = 0;

  /** The next upstream in turn that is not marked down (all down: the next one anyway). */
  function pick(exclude: Set<number>): number {
    const now = Date.now();
    for (let k = 0; k < ups.length; k++) {
      const i = (next + k) % ups.length;
      if (!exclude.has(i) && ups[i]!.downUntil <= now) {
        next = (i + 1) % ups.length;
        return i;
      }
    }
    for (let k = 0; k < ups.length; k++) {
      const i = (next + k) % ups.length;
      if (!exclude.has(i)) {
        next = (i + 1) % ups.length;
        return i;
      }
    }
    return -1;
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const c of req as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > maxBody) {
          res.writeHead(413, { "content-type": "application/json" });
          return res.end(
            JSON.stringify({ error: { code: "payload_too_large", message: "Тело запроса слишком велико." } }),
          );
        }
        chunks.push(c);
      }
    } catch {
      return; // the client went away while sending
    }
    const body = Buffer.concat(chunks);
    const headers = endToEnd(req.headers);
    const fwd = req.socket.remoteAddress ?? "";
    headers["x-forwarded-for"] = req.headers["x-forwarded-for"] ? `${req.headers["x-forwarded-for"]}, ${fwd}` : fwd;
    if (body.length || req.method === "POST" || req.method === "PUT" || req.method === "PATCH")
      headers["content-length"] = String(body.length);
    const tried = new Set<number>();
    let resent = false;
    let clientGone = false;
    res.on("close", () => {
      if (!res.writableFinished) clientGone = true;
    });

    const attempt = (): void => {
      const i = pick(tried);
      if (i < 0 || clientGone) {
        if (!res.headersSent && !clientGone) {
          res.writeHead(502, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { code: "bad_gateway", message: "Ни один сервер не доступен." } }));
        }
        return;
      }
      tried.add(i);
      const up = ups[i]!;
      const upReq = request({ host: up.host, port: up.port, method: req.method, path: req.url, headers, agent });
      let upRes: IncomingMessage | null = null;
      // The client left: abort the upstream request (the server sees a disconnect, as without the proxy).
      const onClientClose = () => {
        if (!res.writableFinished) upReq.destroy();
      };
      res.on("close", onClientClose);
      upReq.on("socket", (s: Socket) => s.setNoDelay(true));
      upReq.on("error", (err: NodeJS.ErrnoException) => {
        res.off("close", onClientClose);
        if (upRes === null && !res.headersSent && REFUSED.has(err.code ?? "")) {
          up.downUntil = Date.now() + downMs;
          return attempt();
        }
        // A kept-alive connection the server closed as idle just as it was reused: the request
        // never reached it (the retry Node's documentation gives for `reusedSocket`). Once per request.
        if (upRes === null && !res.headersSent && upReq.reusedSocket && err.code === "ECONNRESET" && !resent) {
          resent = true;
          tried.delete(i);
          return attempt();
        }
        if (!res.headersSent && !clientGone) {
          res.writeHead(502, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { code: "bad_gateway", message: "Сервер не ответил." } }));
        } else res.destroy();
      });
      upReq.on("response", (r) => {
        upRes = r;
        up.answered++;
        const h = endToEnd(r.headers);
        h["x-upstream"] = String(i);
        res.writeHead(r.statusCode ?? 502, r.statusMessage, h);
        // Headers go out now: an SSE client sees the stream open before the first event.
        res.flushHeaders();
        r.on("data", (c: Buffer) => {
          if (!res.write(c)) {
            r.pause();
            res.once("drain", () => r.resume());
          }
        });
        r.on("end", () => {
          res.off("close", onClientClose);
          res.end();
        });
        // The upstream died mid-response: break the client's connection too (no clean end is faked).
        r.on("close", () => {
          if (!r.complete) res.destroy();
        });
      });
      upReq.end(body);
    };
    attempt();
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port ?? 0, o.host ?? "127.0.0.1", () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://${o.host ?? "127.0.0.1"}:${port}`,
    server,
    counts: () => ups.map((u) => u.answered),
    close: () =>
      new Promise<void>((r) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// `npx tsx scripts/round-robin-proxy.ts [--port N] [--host H] url...` runs it alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(`--${name}`);
    if (i < 0) return undefined;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const port = Number(flag("port") ?? process.env.PORT ?? 8080);
  const host = flag("host") ?? process.env.HOST ?? "127.0.0.1";
  const upstreams = args.length ? args : (process.env.UPSTREAMS ?? "").split(",").filter(Boolean);
  if (!upstreams.length) {
    console.error("usage: npx tsx scripts/round-robin-proxy.ts [--port 8080] [--host 127.0.0.1] http://host:port ...");
    process.exit(2);
  }
  const p = await startRoundRobinProxy({ upstreams, port, host });
  console.log(`round-robin proxy on ${p.url} → ${upstreams.join(", ")}`);
  const stop = () => void p.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
