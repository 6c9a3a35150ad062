import type { Server } from "node:http";

/**
 * Starts `server` on an ephemeral loopback port: its base URL, and a close that drops kept-alive
 * connections first (a benchmark's clients hold many; `close` alone would wait for them).
 */
export async function listenLoopback(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
