import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy between a server process and PostgreSQL, to make a database outage
 * without touching the shared server (issue 47): `cut()` destroys every proxied connection and
 * refuses new ones (each is accepted and reset at once, as a dead host behind a load balancer
 * is); `restore()` forwards again.
 */
export interface TcpProxy {
  port: number;
  /** `postgres://…` with the proxy's port in place of the server's. */
  url(target: string): string;
  cut(): void;
  restore(): void;
  /** Connections forwarded so far. */
  readonly forwarded: number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  let forwarded = 0;
  const server: Server = createServer((client) => {
    if (down) return void client.resetAndDestroy();
    forwarded++;
    const upstream = connect(targetPort, targetHost);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  const proxy: TcpProxy = {
    port,
    url(target) {
      const u = new URL(target);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut() {
      down = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    restore() {
      down = false;
    },
    get forwarded() {
      return forwarded;
    },
    async close() {
      proxy.cut();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return proxy;
}
