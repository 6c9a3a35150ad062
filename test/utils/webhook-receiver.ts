import { Webhook } from "standardwebhooks";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll } from "vitest";

export interface Delivery {
  headers: Record<string, string>;
  body: string;
  json: Record<string, unknown>;
  status: number;
}

export interface WebhookReceiver {
  url: string;
  deliveries: Delivery[];
  failNext(...statuses: number[]): void;
  /** While down, every delivery is answered 503 (an outage of the receiver). */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

/** A webhook receiver on loopback: records every POST and answers with the next scripted status (200 when none is queued). */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  const queue: number[] = [];
  let down = false;
  const server: Server = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    const status = down ? 503 : (queue.shift() ?? 200);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    deliveries.push({ headers, body, json: JSON.parse(body) as Record<string, unknown>, status });
    res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "nope");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}/hook`,
    deliveries,
    failNext: (...s) => queue.push(...s),
    setDown: (d) => (down = d),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A `whsec_` secret (Standard Webhooks: base64 after the prefix) for a test's receiver. */
export const testWebhookSecret = (seed: string) => `whsec_${Buffer.from(seed.padEnd(32, "-")).toString("base64")}`;

/**
 * Verifies a delivery with the stock Standard Webhooks library (as a receiver would): throws when
 * the signature, the id or the timestamp does not hold; returns the verified body.
 */
export function verifyDelivery(secret: string, d: Delivery): unknown {
  return new Webhook(secret).verify(d.body, d.headers);
}

/**
 * Vitest hooks around a receiver for the test file (declare it before `useTestServer`, whose env
 * function then reads `hook.url`); its fields are ready inside tests.
 */
export function useWebhookReceiver(): WebhookReceiver {
  let r: WebhookReceiver | undefined;
  beforeAll(async () => {
    r = await startWebhookReceiver();
  });
  afterAll(async () => {
    await r?.close();
  });
  const get = () => {
    if (!r) throw new Error("webhook receiver not ready (use inside tests and later hooks)");
    return r;
  };
  return {
    get url() {
      return get().url;
    },
    get deliveries() {
      return get().deliveries;
    },
    failNext: (...s) => get().failNext(...s),
    setDown: (d) => get().setDown(d),
    close: () => get().close(),
  };
}
