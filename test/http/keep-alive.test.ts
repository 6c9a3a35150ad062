import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../http/config";
import { useTestServer } from "../utils/server";

const server = useTestServer({ env: { HTTP_KEEP_ALIVE_MS: "2000" } });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A raw connection, so that only the server decides when it closes (Node's own http.Agent also
 * drops idle sockets by the server's Keep-Alive hint). `get` sends GET /healthz and resolves with
 * the status line once the whole response (its Content-Length) is in.
 */
function rawConnection(): Promise<{ socket: Socket; get: () => Promise<string>; closed: Promise<number> }> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => {
      let buf = "";
      let waiting: ((status: string) => void) | null = null;
      socket.setEncoding("utf8");
      socket.on("data", (d: string) => {
        buf += d;
        const head = buf.indexOf("\r\n\r\n");
        if (head < 0 || !waiting) return;
        const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, head))?.[1] ?? 0);
        if (buf.length < head + 4 + length) return;
        const status = buf.slice(0, buf.indexOf("\r\n"));
        buf = buf.slice(head + 4 + length);
        const w = waiting;
        waiting = null;
        w(status);
      });
      const closed = new Promise<number>((r) => socket.once("close", () => r(performance.now())));
      const get = () =>
        new Promise<string>((r) => {
          waiting = r;
          socket.write(`GET /healthz HTTP/1.1\r\nHost: ${u.host}\r\nConnection: keep-alive\r\n\r\n`);
        });
      resolve({ socket, get, closed });
    });
    socket.once("error", reject);
  });
}

describe("kept-alive connections (HTTP_KEEP_ALIVE_MS)", () => {
  it("defaults to 65 s, above the idle window of common proxies and clients (Node's own is 5 s)", () => {
    expect(loadConfig({}).keepAliveMs).toBe(65_000);
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_MS: "10" })).toThrow(/HTTP_KEEP_ALIVE_MS/);
    const s = server.started.server as unknown as { keepAliveTimeout: number; headersTimeout: number };
    expect(s.keepAliveTimeout).toBe(2000);
    expect(s.headersTimeout).toBeGreaterThan(s.keepAliveTimeout);
  });

  it("keeps an idle connection open for the configured time, then the server closes it", async () => {
    const c = await rawConnection();
    expect(await c.get()).toBe("HTTP/1.1 200 OK");
    await sleep(1_200);
    // Idle for less than the setting (Node's default 5 s would pass too; 1.2 s of 2 s shows the setting is used).
    expect(await c.get()).toBe("HTTP/1.1 200 OK");
    const idleFrom = performance.now();
    const closedAt = await Promise.race([c.closed, sleep(6_000).then(() => Number.NaN)]);
    // The server closed it, after the setting and well before Node's default would have.
    expect(closedAt - idleFrom).toBeGreaterThanOrEqual(1_500);
    expect(closedAt - idleFrom).toBeLessThan(4_500);
    c.socket.destroy();
  });
});
